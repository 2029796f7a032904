import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/** Settings, members and their credentials, and the first tables of each area. */
export const initial: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('settings')
      .addColumn('key', 'text', (c) => c.primaryKey())
      .addColumn('value', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('members')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('email', 'text', (c) => c.notNull().unique())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('handle', 'text', (c) => c.notNull().unique())
      .addColumn('tier', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('tokens')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('member_id', 'text', (c) => c.notNull().references('members.id'))
      .addColumn('hash', 'text', (c) => c.notNull().unique())
      .addColumn('prefix', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('scopes', 'text', (c) => c.notNull())
      .addColumn('sandbox', 'integer', (c) => c.notNull())
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('last_used_at', 'bigint')
      .addColumn('revoked_at', 'bigint')
      .execute();
    await db.schema.createIndex('tokens_member').on('tokens').column('member_id').execute();
    await db.schema
      .createTable('sessions')
      .addColumn('id_hash', 'text', (c) => c.primaryKey())
      .addColumn('member_id', 'text', (c) => c.notNull().references('members.id'))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('revoked_at', 'bigint')
      .execute();
    await db.schema
      .createTable('device_grants')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('device_code_hash', 'text', (c) => c.notNull().unique())
      .addColumn('user_code_hash', 'text', (c) => c.notNull().unique())
      .addColumn('scopes', 'text', (c) => c.notNull())
      .addColumn('client_name', 'text')
      .addColumn('sandbox', 'integer', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('interval_s', 'integer', (c) => c.notNull())
      .addColumn('last_poll_at', 'bigint')
      .addColumn('member_id', 'text')
      .addColumn('granted_scopes', 'text')
      .addColumn('denied_scopes', 'text')
      .addColumn('decided_at', 'bigint')
      .addColumn('reason', 'text')
      .addColumn('token_id', 'text')
      .addColumn('ip', 'text')
      .addColumn('user_agent', 'text')
      .execute();
    await db.schema
      .createTable('counters')
      .addColumn('key', 'text', (c) => c.primaryKey())
      .addColumn('count', 'integer', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('counters_expiry').on('counters').column('expires_at').execute();
    await db.schema
      .createTable('idempotency')
      .addColumn('key_hash', 'text', (c) => c.primaryKey())
      .addColumn('fingerprint', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('status', 'integer')
      .addColumn('headers', 'text')
      .addColumn('body', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('highlights')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('member_id', 'text', (c) => c.notNull().references('members.id'))
      .addColumn('token_id', 'text', (c) => c.notNull())
      .addColumn('story', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('submitted_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('decided_at', 'bigint')
      .addColumn('decided_by', 'text')
      .execute();
    await db.schema
      .createIndex('highlights_member_status')
      .on('highlights')
      .columns(['member_id', 'status'])
      .execute();
    await db.schema
      .createTable('feedback')
      .addColumn('ticket_id', 'text', (c) => c.primaryKey())
      .addColumn('member_id', 'text')
      .addColumn('token_id', 'text')
      .addColumn('category', 'text', (c) => c.notNull())
      .addColumn('category_text', 'text')
      .addColumn('priority', 'text', (c) => c.notNull())
      .addColumn('message', 'text', (c) => c.notNull())
      .addColumn('url', 'text')
      .addColumn('expected', 'text')
      .addColumn('got', 'text')
      .addColumn('agent_id', 'text')
      .addColumn('contact', 'text')
      .addColumn('ip_hash', 'text', (c) => c.notNull())
      .addColumn('warnings', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('events')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('platform_url', 'text', (c) => c.notNull().unique())
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('start_at', 'bigint', (c) => c.notNull())
      .addColumn('end_at', 'bigint')
      .addColumn('location', 'text')
      .addColumn('cover_url', 'text')
      .addColumn('description', 'text')
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('resources')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('capacity', 'integer', (c) => c.notNull())
      .addColumn('open_hours', 'text', (c) => c.notNull())
      .addColumn('bookable', 'integer', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('corpus_documents')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('authors', 'text', (c) => c.notNull())
      .addColumn('year', 'integer')
      .addColumn('url', 'text')
      .addColumn('body', 'text', (c) => c.notNull())
      .addColumn('added_at', 'bigint', (c) => c.notNull())
      .execute();
  },
};
