import { type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * Indexes in the order the bounded lists page, so a page reads its own rows whatever the table's
 * size: the members oldest first and by name (the operator's list, the directory); a member's
 * tokens newest first (the agent console) and bookings by start (their bookings page); the
 * upcoming events, those starting from now by start and those already started but not ended by
 * their end (`coalesce(end_at, start_at)`, the expression the read filters on, with start_at beside
 * it so the filter needs no row); and the queues the workers empty (bookings, RSVP deliveries) by
 * status and arrival, which the landing page counts.
 */
export const listIndexes: Migration = {
  async up(db: Kysely<any>) {
    const indexes: [string, string, string[]][] = [
      ['members_created', 'members', ['created_at', 'id']],
      ['members_name', 'members', ['name', 'id']],
      ['tokens_member_created', 'tokens', ['member_id', 'created_at', 'id']],
      ['bookings_member_start', 'bookings', ['member_id', 'start_at', 'id']],
      ['events_start_id', 'events', ['start_at', 'id']],
      // The landing page's backlog counts: the waiting rows and the oldest among them, from the index.
      ['bookings_status_created', 'bookings', ['status', 'created_at']],
      ['rsvps_status_created', 'rsvps', ['status', 'created_at']],
    ];
    for (const [name, table, columns] of indexes)
      await db.schema.createIndex(name).on(table).columns(columns).execute();
    await sql`create index events_end on events (coalesce(end_at, start_at), start_at)`.execute(db);
    // Served by the longer indexes above from now on.
    await db.schema.dropIndex('events_start').execute();
    await db.schema.dropIndex('tokens_member').execute();
    await db.schema.dropIndex('bookings_member').execute();
  },
};
