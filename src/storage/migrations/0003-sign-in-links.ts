import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * Single-use email sign-in links (like every secret, only their hash is stored), and the session a
 * device code is bound to once a signed-in member has entered it, and the operators' audit trail.
 */
export const signInLinks: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('sign_in_links')
      .addColumn('id_hash', 'text', (c) => c.primaryKey())
      .addColumn('email', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('used_at', 'bigint')
      .execute();
    await db.schema.alterTable('device_grants').addColumn('bound_session_hash', 'text').execute();
    await db.schema
      .createTable('operator_audit')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('at', 'bigint', (c) => c.notNull())
      .addColumn('operator_id', 'text', (c) => c.notNull())
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('target', 'text', (c) => c.notNull())
      .addColumn('outcome', 'text', (c) => c.notNull())
      .addColumn('detail', 'text', (c) => c.notNull())
      .execute();
  },
};
