import type { Db, Executor } from '../../storage/schema.ts';

export type QueueTable = 'rsvps' | 'bookings';

export interface Claim {
  id: string;
  /** The lease's expiry: only the holder of this exact lease may settle the job. */
  lease: number;
}

const DUE_COLUMN = { rsvps: 'next_attempt_at', bookings: 'created_at' } as const;

/**
 * Claims up to `limit` due jobs. Each claim is a conditional update that succeeds for one worker
 * only (on PostgreSQL the row lock makes a racing update re-check the condition), so two workers
 * never hold the same job. A worker killed mid-job holds it until the lease (WORKER_LEASE_SECONDS)
 * ends; then the job is claimable again.
 */
export async function claimDueJobs(
  db: Db,
  table: QueueTable,
  now: number,
  limit: number,
  leaseMs: number,
): Promise<Claim[]> {
  const q = db as unknown as Db & { selectFrom(t: QueueTable): any; updateTable(t: QueueTable): any };
  const due = DUE_COLUMN[table];
  const candidates: { id: string }[] = await q
    .selectFrom(table)
    .select('id')
    .where('status', '=', 'queued')
    .where(due, '<=', now)
    .where((eb: any) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]))
    .orderBy(due)
    .limit(limit)
    .execute();
  const claims: Claim[] = [];
  const lease = now + leaseMs;
  for (const { id } of candidates) {
    const result = await q
      .updateTable(table)
      .set({ locked_until: lease })
      .where('id', '=', id)
      .where('status', '=', 'queued')
      .where((eb: any) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]))
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 1) claims.push({ id, lease });
  }
  return claims;
}

/** Settles a claimed job if the lease is still this worker's; false means another worker took it over. */
export async function settleJob(
  trx: Executor,
  table: QueueTable,
  claim: Claim,
  changes: Record<string, unknown>,
): Promise<boolean> {
  const q = trx as unknown as { updateTable(t: QueueTable): any };
  const result = await q
    .updateTable(table)
    .set({ ...changes, locked_until: null })
    .where('id', '=', claim.id)
    .where('status', '=', 'queued')
    .where('locked_until', '=', claim.lease)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
