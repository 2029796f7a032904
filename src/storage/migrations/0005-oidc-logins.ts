import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * OpenID Connect logins in flight, between the redirect to the provider and its callback. Like every
 * secret here, neither the `state` nor the browser's login cookie is stored, only their SHA-256; the
 * PKCE verifier and the nonce are derived from the cookie, so they are never stored at all.
 */
export const oidcLogins: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('oidc_logins')
      .addColumn('state_hash', 'text', (c) => c.primaryKey())
      .addColumn('browser_hash', 'text', (c) => c.notNull())
      .addColumn('next_path', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('used_at', 'bigint')
      .execute();
    await db.schema.createIndex('oidc_logins_expiry').on('oidc_logins').column('expires_at').execute();
  },
};
