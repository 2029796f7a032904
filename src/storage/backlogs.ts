import { sql } from 'kysely';
import type { Executor } from './schema.ts';

// What waits in each work queue (read across the queue tables for the operator's pages): how many
// items, up to a bound, and when the oldest arrived.

export type QueueName = 'tier_requests' | 'highlights' | 'event_requests' | 'feedback' | 'rsvps' | 'bookings';

/**
 * Counted up to this many: past it a page says "1000+". A queue nobody works through grows without
 * bound, and counting all of it would cost every load of every operator page (and, on the embedded
 * engine, every request waiting behind it) a read of the whole backlog.
 */
export const BACKLOG_COUNT_LIMIT = 1000;

/** Each queue's table, its arrival column and the status of what waits in it. */
const QUEUES: Record<QueueName, { table: string; arrived: string; status: string }> = {
  tier_requests: { table: 'tier_requests', arrived: 'created_at', status: 'pending' },
  highlights: { table: 'highlights', arrived: 'submitted_at', status: 'pending' },
  event_requests: { table: 'event_requests', arrived: 'created_at', status: 'pending' },
  feedback: { table: 'feedback', arrived: 'created_at', status: 'open' },
  rsvps: { table: 'rsvps', arrived: 'created_at', status: 'queued' },
  bookings: { table: 'bookings', arrived: 'created_at', status: 'queued' },
};

function waitingIn(executor: Executor, queue: QueueName, now: number) {
  const { table, status } = QUEUES[queue];
  // Kysely cannot type a table chosen at run time; the names come from the list above.
  let rows = (executor as Executor as any).selectFrom(table).where('status', '=', status);
  // A story left unreviewed past its expiry has left the queue.
  // Written `+expires_at` so that no engine reads it through an index: the queue is walked in the
  // (status, arrival) index's order, which stops at the bound, not sorted from an expiry range.
  if (queue === 'highlights') rows = rows.where(sql`+expires_at`, '>', now);
  return rows;
}

export const backlogs = {
  /**
   * How many items wait in the queue at `now` (at most BACKLOG_COUNT_LIMIT; `more` when others wait
   * past it), and the oldest one's arrival (null with none). Both are index ranges that stop early.
   */
  async of(
    executor: Executor,
    queue: QueueName,
    now: number,
  ): Promise<{ waiting: number; oldest: number | null; more: boolean }> {
    const { arrived } = QUEUES[queue];
    const [counted, first] = await Promise.all([
      executor
        .selectFrom(
          waitingIn(executor, queue, now)
            .select(sql.lit(1).as('one'))
            // In the index's order, so the planner walks the queue's range and stops at the bound
            // (PostgreSQL would otherwise scan the table until enough rows matched).
            .orderBy(arrived)
            .limit(BACKLOG_COUNT_LIMIT + 1)
            .as('waiting_rows'),
        )
        .select(sql<number>`count(*)`.as('n'))
        .executeTakeFirstOrThrow(),
      waitingIn(executor, queue, now)
        .select(sql.ref(arrived).as('at'))
        .orderBy(arrived)
        .limit(1)
        .executeTakeFirst(),
    ]);
    // PostgreSQL answers counts and bigints as strings: read as numbers.
    const n = Number(counted.n);
    return {
      waiting: Math.min(n, BACKLOG_COUNT_LIMIT),
      oldest: first ? Number(first.at) : null,
      more: n > BACKLOG_COUNT_LIMIT,
    };
  },
};
