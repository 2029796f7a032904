import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * The two worker queues by status and arrival, as the operator pages read their backlogs
 * (storage/backlogs.ts: how many wait, up to a bound, and the oldest): an index range that stops
 * early, rather than a scan of every booking or a sort of every queued RSVP. The workers' own reads
 * keep their indexes (rsvps_due, bookings_resource_time).
 */
export const workerQueueArrivals: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createIndex('rsvps_status_created')
      .on('rsvps')
      .columns(['status', 'created_at'])
      .execute();
    await db.schema
      .createIndex('bookings_status_created')
      .on('bookings')
      .columns(['status', 'created_at'])
      .execute();
  },
};
