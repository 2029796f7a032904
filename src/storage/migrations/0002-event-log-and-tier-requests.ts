import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/** The member-readable event log and tier requests. */
export const eventLogAndTierRequests: Migration = {
  async up(db: Kysely<any>) {
    // One counter row per reader: ids are taken from it inside the appending transaction, so they
    // never skip and become visible in order, even on PostgreSQL where a sequence could not promise that.
    await db.schema
      .createTable('event_log_heads')
      .addColumn('recipient_id', 'text', (c) => c.primaryKey())
      .addColumn('last_id', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('event_log')
      .addColumn('recipient_id', 'text', (c) => c.notNull())
      .addColumn('id', 'bigint', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('at', 'bigint', (c) => c.notNull())
      .addColumn('actor', 'text', (c) => c.notNull())
      .addColumn('target', 'text', (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('actions', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('event_log_pk', ['recipient_id', 'id'])
      .execute();
    await db.schema
      .createTable('tier_requests')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('member_id', 'text', (c) => c.notNull().references('members.id'))
      .addColumn('tier', 'text', (c) => c.notNull())
      .addColumn('note', 'text')
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('decided_at', 'bigint')
      .addColumn('decided_by', 'text')
      .addColumn('granted_tier', 'text')
      .addColumn('reason', 'text')
      .execute();
    await db.schema
      .createIndex('tier_requests_member')
      .on('tier_requests')
      .columns(['member_id', 'status'])
      .execute();
  },
};
