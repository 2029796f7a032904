import { queue } from '../../storage/queue.ts';
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

/** One aggregate read of a queue (for metrics); served by the (status, …) indexes the workers use. */
export async function queueBacklog(db: Executor, table: QueueTable, now: number): Promise<QueueBacklog> {
  const { queued, leased, oldestDue } = await queue.backlog(db, table, now);
  return {
    queued,
    leased,
    oldestDueAgeSeconds: oldestDue === null ? 0 : Math.max(0, (now - oldestDue) / 1000),
  };
}
