import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * Signed requests (spec 4.4, reference §7). A token carries at most one bound Ed25519 key, so the key
 * lives on the token's own row: the bearer lookup that authenticates every call reads it with no
 * second query. Nonces of verified signatures are kept, shared by every instance, only as long as
 * the signature they came with could still be accepted (its freshness window): one atomic insert
 * claims a nonce, and a second claim of a live one finds the row.
 */
export const signingKeys: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable('tokens').addColumn('signing_key_id', 'text').execute();
    await db.schema.alterTable('tokens').addColumn('signing_key_x', 'text').execute();
    await db.schema.alterTable('tokens').addColumn('signing_key_bound_at', 'bigint').execute();
    await db.schema
      .alterTable('tokens')
      .addColumn('signing_enforced', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .createTable('signature_nonces')
      .addColumn('nonce_key', 'text', (c) => c.primaryKey())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('signature_nonces_expiry')
      .on('signature_nonces')
      .column('expires_at')
      .execute();
  },
};
