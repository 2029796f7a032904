import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * Indexes that serve the operator queues and the public highlights list in the order they page
 * (storage/paging.ts: time, then id), so a page reads its own rows rather than scanning and sorting
 * the table: each queue by status, the whole list of a kind by time alone.
 */
export const queueIndexes: Migration = {
  async up(db: Kysely<any>) {
    const indexes: [string, string, string[]][] = [
      ['highlights_status_submitted', 'highlights', ['status', 'submitted_at', 'id']],
      ['highlights_submitted', 'highlights', ['submitted_at', 'id']],
      ['highlights_status_decided', 'highlights', ['status', 'decided_at', 'id']],
      ['feedback_status_created', 'feedback', ['status', 'created_at', 'ticket_id']],
      ['tier_requests_status_created', 'tier_requests', ['status', 'created_at', 'id']],
      ['event_requests_status_created', 'event_requests', ['status', 'created_at', 'id']],
      ['event_requests_created', 'event_requests', ['created_at', 'id']],
    ];
    for (const [name, table, columns] of indexes)
      await db.schema.createIndex(name).on(table).columns(columns).execute();
    // Served by event_requests_status_created from now on.
    await db.schema.dropIndex('event_requests_status').execute();
  },
};
