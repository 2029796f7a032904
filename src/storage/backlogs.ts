import { sql } from 'kysely';
import type { Executor } from './schema.ts';

// What waits in each work queue (read across the queue tables for the operator's landing page):
// how many items, and when the oldest arrived.

export type QueueName = 'tier_requests' | 'highlights' | 'event_requests' | 'feedback' | 'rsvps' | 'bookings';

function waitingIn(executor: Executor, queue: QueueName, now: number) {
  const count = sql<number>`count(*)`.as('waiting');
  switch (queue) {
    case 'tier_requests':
      return executor
        .selectFrom('tier_requests')
        .select([count, sql<number | null>`min(created_at)`.as('oldest')])
        .where('status', '=', 'pending');
    case 'highlights':
      return executor
        .selectFrom('highlights')
        .select([count, sql<number | null>`min(submitted_at)`.as('oldest')])
        .where('status', '=', 'pending')
        .where('expires_at', '>', now);
    case 'event_requests':
      return executor
        .selectFrom('event_requests')
        .select([count, sql<number | null>`min(created_at)`.as('oldest')])
        .where('status', '=', 'pending');
    case 'feedback':
      return executor
        .selectFrom('feedback')
        .select([count, sql<number | null>`min(created_at)`.as('oldest')])
        .where('status', '=', 'open');
    case 'rsvps':
      return executor
        .selectFrom('rsvps')
        .select([count, sql<number | null>`min(created_at)`.as('oldest')])
        .where('status', '=', 'queued');
    case 'bookings':
      return executor
        .selectFrom('bookings')
        .select([count, sql<number | null>`min(created_at)`.as('oldest')])
        .where('status', '=', 'queued');
  }
}

export const backlogs = {
  /** How many items wait in the queue at `now`, and the oldest one's arrival (null with none). */
  async of(
    executor: Executor,
    queue: QueueName,
    now: number,
  ): Promise<{ waiting: number; oldest: number | null }> {
    // PostgreSQL answers counts as strings: read as numbers.
    const row = await waitingIn(executor, queue, now).executeTakeFirstOrThrow();
    return { waiting: Number(row.waiting), oldest: row.oldest === null ? null : Number(row.oldest) };
  },
};
