import { sql } from 'kysely';
import type { Executor } from './schema.ts';

// The work queues' leases (tables rsvps and bookings, columns status and locked_until): a job is
// due while queued, past its due time and not leased (or its lease ran out).

/** Kysely cannot type a table chosen at run time; both queue tables have the columns used here. */
type AnyQueue = { selectFrom(t: QueueTable): any; updateTable(t: QueueTable): any };

export type QueueTable = 'rsvps' | 'bookings';

const DUE_COLUMN = { rsvps: 'next_attempt_at', bookings: 'created_at' } as const;

const unleased = (now: number) => (eb: any) =>
  eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]);

export const queue = {
  /** Up to `limit` due jobs, by due time, with the lease each had (null: never leased). */
  due(
    executor: Executor,
    table: QueueTable,
    now: number,
    limit: number,
  ): Promise<{ id: string; locked_until: number | null }[]> {
    const due = DUE_COLUMN[table];
    return (executor as unknown as AnyQueue)
      .selectFrom(table)
      .select(['id', 'locked_until'])
      .where('status', '=', 'queued')
      .where(due, '<=', now)
      .where(unleased(now))
      .orderBy(due)
      .limit(limit)
      .execute();
  },

  /**
   * Leases a job still queued and unleased at `now` until `lease`: a conditional update that
   * succeeds for one caller only (on PostgreSQL a racing update re-checks it after the row lock).
   */
  async lease(
    executor: Executor,
    table: QueueTable,
    id: string,
    now: number,
    lease: number,
  ): Promise<boolean> {
    const result = await (executor as unknown as AnyQueue)
      .updateTable(table)
      .set({ locked_until: lease })
      .where('id', '=', id)
      .where('status', '=', 'queued')
      .where(unleased(now))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  },

  /** Writes `changes` and ends the lease, if the job still holds exactly `lease`: whether it did. */
  async settle(
    executor: Executor,
    table: QueueTable,
    id: string,
    lease: number,
    changes: Record<string, unknown>,
  ): Promise<boolean> {
    const result = await (executor as unknown as AnyQueue)
      .updateTable(table)
      .set({ ...changes, locked_until: null })
      .where('id', '=', id)
      .where('status', '=', 'queued')
      .where('locked_until', '=', lease)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  },

  /**
   * One aggregate read of a queue (for metrics), served by the (status, …) indexes the workers use:
   * the queued jobs, how many of them hold a lease past `now`, and the earliest due time at or
   * before `now` (null when none is due).
   */
  async backlog(
    executor: Executor,
    table: QueueTable,
    now: number,
  ): Promise<{ queued: number; leased: number; oldestDue: number | null }> {
    const due = sql.ref(DUE_COLUMN[table]);
    const row = await sql<{
      queued: number | string;
      leased: number | string | null;
      oldest: number | string | null;
    }>`
    select count(*) as queued,
      sum(case when locked_until > ${now} then 1 else 0 end) as leased,
      min(case when ${due} <= ${now} then ${due} end) as oldest
    from ${sql.table(table)} where status = 'queued'`.execute(executor);
    const { queued, leased, oldest } = row.rows[0] ?? { queued: 0, leased: 0, oldest: null };
    return {
      queued: Number(queued),
      leased: Number(leased ?? 0),
      oldestDue: oldest === null ? null : Number(oldest),
    };
  },
};
