import { type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * What members' agents come for: the events cache's provenance, RSVPs and bookings (queued, then
 * settled by workers), event proposals, directory profiles, the activity log and the donor wall.
 */
export const memberOperations: Migration = {
  async up(db: Kysely<any>) {
    const engine = await engineOf(db);
    // Where a cached event came from: the platform feed (replaced on each refresh), an approved
    // member proposal, or the demo seed. Only feed rows are deleted when the feed drops them.
    await db.schema
      .alterTable('events')
      .addColumn('source', 'text', (c) => c.notNull().defaultTo('local'))
      .execute();
    await db.schema.createIndex('events_start').on('events').column('start_at').execute();

    await db.schema
      .createTable('rsvps')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('event_url', 'text', (c) => c.notNull())
      .addColumn('member_id', 'text', (c) => c.notNull().references('members.id'))
      .addColumn('token_id', 'text')
      .addColumn('email', 'text')
      .addColumn('name', 'text')
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull())
      .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
      .addColumn('locked_until', 'bigint')
      .addColumn('settled_at', 'bigint')
      .addColumn('last_error', 'text')
      .execute();
    await db.schema.createIndex('rsvps_dedupe').on('rsvps').columns(['member_id', 'event_url']).execute();
    await db.schema.createIndex('rsvps_due').on('rsvps').columns(['status', 'next_attempt_at']).execute();

    await db.schema
      .createTable('event_requests')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('member_id', 'text', (c) => c.notNull().references('members.id'))
      .addColumn('token_id', 'text')
      .addColumn('details', 'text', (c) => c.notNull())
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('start_at', 'bigint', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('decided_at', 'bigint')
      .addColumn('decided_by', 'text')
      .addColumn('reason', 'text')
      .addColumn('event_id', 'text')
      .execute();
    await db.schema.createIndex('event_requests_status').on('event_requests').column('status').execute();

    await db.schema
      .createTable('bookings')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('resource_id', 'text', (c) => c.notNull().references('resources.id'))
      .addColumn('member_id', 'text', (c) => c.notNull().references('members.id'))
      .addColumn('token_id', 'text')
      .addColumn('start_at', 'bigint', (c) => c.notNull())
      .addColumn('end_at', 'bigint', (c) => c.notNull())
      .addColumn('purpose', 'text', (c) => c.notNull())
      .addColumn('email', 'text')
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('reason', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('locked_until', 'bigint')
      .addColumn('settled_at', 'bigint')
      .execute();
    await db.schema
      .createIndex('bookings_resource_time')
      .on('bookings')
      .columns(['resource_id', 'status', 'start_at'])
      .execute();
    await db.schema
      .createIndex('bookings_member')
      .on('bookings')
      .columns(['member_id', 'start_at'])
      .execute();

    await db.schema
      .createTable('member_profiles')
      .addColumn('member_id', 'text', (c) => c.primaryKey().references('members.id'))
      .addColumn('bio', 'text', (c) => c.notNull())
      .addColumn('skills', 'text', (c) => c.notNull())
      .addColumn('projects', 'text', (c) => c.notNull())
      .addColumn('visibility', 'text', (c) => c.notNull())
      .addColumn('show_email', 'integer', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    if (engine === 'sqlite') {
      // The embedded engine's full-text index, kept in step by the directory module on every profile write.
      await sql`create virtual table directory_fts using fts5(member_id unindexed, name, bio, skills, projects, tokenize = 'unicode61 remove_diacritics 2')`.execute(
        db,
      );
    } else {
      await sql`alter table member_profiles add column search_text text not null default ''`.execute(db);
      await sql`create index member_profiles_fts on member_profiles using gin (to_tsvector('simple', search_text))`.execute(
        db,
      );
    }

    await db.schema
      .createTable('activity')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('member_id', 'text', (c) => c.notNull())
      .addColumn('at', 'bigint', (c) => c.notNull())
      .addColumn('operation', 'text', (c) => c.notNull())
      .addColumn('surface', 'text', (c) => c.notNull())
      .addColumn('token_prefix', 'text', (c) => c.notNull())
      .addColumn('status', 'integer', (c) => c.notNull())
      .addColumn('outcome', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('activity_member_at').on('activity').columns(['member_id', 'id']).execute();

    await db.schema
      .createTable('donations')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('donor_name', 'text', (c) => c.notNull())
      .addColumn('amount_cents', 'bigint', (c) => c.notNull())
      .addColumn('message', 'text')
      .addColumn('public', 'integer', (c) => c.notNull())
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('donations_created').on('donations').column('created_at').execute();
  },
};

export async function engineOf(db: Kysely<any>): Promise<'sqlite' | 'postgres'> {
  // Asked of PostgreSQL first: a failed statement there would abort the migration's transaction.
  try {
    await sql`select version()`.execute(db);
    return 'postgres';
  } catch {
    return 'sqlite';
  }
}
