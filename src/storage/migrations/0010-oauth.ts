import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * OAuth 2.1 authorization code grant (docs/connect-an-mcp-host.md). Clients registered through RFC
 * 7591 (public clients: no secret), and authorizations: the request a client sends the member's
 * browser with, then the member's decision, then the single-use code and the token it became.
 * Secrets (the consent link's request id, the code) are stored as their SHA-256 only.
 */
export const oauth: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('oauth_clients')
      .addColumn('client_id', 'text', (c) => c.primaryKey())
      .addColumn('client_name', 'text')
      .addColumn('redirect_uris', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('used_at', 'bigint')
      .execute();
    await db.schema.createIndex('oauth_clients_created').on('oauth_clients').column('created_at').execute();
    await db.schema
      .createTable('oauth_authorizations')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('request_hash', 'text', (c) => c.notNull().unique())
      .addColumn('client_id', 'text', (c) => c.notNull())
      .addColumn('client_name', 'text')
      .addColumn('redirect_uri', 'text', (c) => c.notNull())
      .addColumn('scopes', 'text', (c) => c.notNull())
      .addColumn('state', 'text')
      .addColumn('code_challenge', 'text', (c) => c.notNull())
      .addColumn('resource', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('bound_session_hash', 'text')
      .addColumn('member_id', 'text')
      .addColumn('granted_scopes', 'text')
      .addColumn('sandbox', 'integer', (c) => c.notNull())
      .addColumn('decided_at', 'bigint')
      .addColumn('code_hash', 'text', (c) => c.unique())
      .addColumn('code_expires_at', 'bigint')
      .addColumn('token_id', 'text')
      .addColumn('exchanged_at', 'bigint')
      .execute();
    await db.schema
      .createIndex('oauth_authorizations_expiry')
      .on('oauth_authorizations')
      .column('expires_at')
      .execute();
  },
};
