import { sql } from 'kysely';
import type { Executor } from '../../storage/schema.ts';
import type { QueueTable } from './claim.ts';

export interface QueueBacklog {
  /** Jobs with status queued, due now or later. */
  queued: number;
  /** Of those, held under a live lease by some worker. */
  leased: number;
  /** How long the oldest due job has waited past its due time; 0 when none is due. */
  oldestDueAgeSeconds: number;
}

const DUE_COLUMN = { rsvps: 'next_attempt_at', bookings: 'created_at' } as const;

/** One aggregate read of a queue (for metrics); served by the (status, …) indexes the workers use. */
export async function queueBacklog(db: Executor, table: QueueTable, now: number): Promise<QueueBacklog> {
  const due = sql.ref(DUE_COLUMN[table]);
  const row = await sql<{
    queued: number | string;
    leased: number | string | null;
    oldest: number | string | null;
  }>`
    select count(*) as queued,
      sum(case when locked_until > ${now} then 1 else 0 end) as leased,
      min(case when ${due} <= ${now} then ${due} end) as oldest
    from ${sql.table(table)} where status = 'queued'`.execute(db);
  const { queued, leased, oldest } = row.rows[0] ?? { queued: 0, leased: 0, oldest: null };
  return {
    queued: Number(queued),
    leased: Number(leased ?? 0),
    oldestDueAgeSeconds: oldest === null ? 0 : Math.max(0, (now - Number(oldest)) / 1000),
  };
}
