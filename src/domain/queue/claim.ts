import { leaseExpiries, leasesLost, leasesReleased } from '../../core/metrics.ts';
import type { Executor } from '../../storage/schema.ts';

/** Kysely cannot type a table chosen at run time; both queue tables have the columns used here. */
type AnyQueue = { selectFrom(t: QueueTable): any; updateTable(t: QueueTable): any };

export type QueueTable = 'rsvps' | 'bookings';

export interface Claim {
  id: string;
  /** The lease's expiry: only the holder of this exact lease may settle the job. */
  lease: number;
}

const DUE_COLUMN = { rsvps: 'next_attempt_at', bookings: 'created_at' } as const;

/** The claims this process holds and has not settled, so a draining instance can hand them back. */
const held = new Map<string, { table: QueueTable; claim: Claim }>();

function heldKey(table: QueueTable, id: string): string {
  return `${table}:${id}`;
}

/**
 * Claims up to `limit` due jobs. Each claim is a conditional update that succeeds for one worker
 * only (on PostgreSQL the row lock makes a racing update re-check the condition), so two workers
 * never hold the same job. A worker killed mid-job holds it until the lease (WORKER_LEASE_SECONDS)
 * ends; then the job is claimable again.
 */
export async function claimDueJobs(
  db: Executor,
  table: QueueTable,
  now: number,
  limit: number,
  leaseMs: number,
): Promise<Claim[]> {
  const q = db as unknown as AnyQueue;
  const due = DUE_COLUMN[table];
  // A job that failed before settling keeps its entry until its lease has run out.
  for (const [key, entry] of held) if (entry.claim.lease <= now) held.delete(key);
  const candidates: { id: string; locked_until: number | null }[] = await q
    .selectFrom(table)
    .select(['id', 'locked_until'])
    .where('status', '=', 'queued')
    .where(due, '<=', now)
    .where((eb: any) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]))
    .orderBy(due)
    .limit(limit)
    .execute();
  const claims: Claim[] = [];
  const lease = now + leaseMs;
  for (const { id, locked_until } of candidates) {
    const result = await q
      .updateTable(table)
      .set({ locked_until: lease })
      .where('id', '=', id)
      .where('status', '=', 'queued')
      .where((eb: any) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]))
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) continue;
    // A job still leased to another worker when its lease ran out: that worker died or stalled.
    if (locked_until !== null) leaseExpiries.inc({ queue: table });
    claims.push({ id, lease });
    held.set(heldKey(table, id), { table, claim: { id, lease } });
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
  const q = trx as unknown as AnyQueue;
  const result = await q
    .updateTable(table)
    .set({ ...changes, locked_until: null })
    .where('id', '=', claim.id)
    .where('status', '=', 'queued')
    .where('locked_until', '=', claim.lease)
    .executeTakeFirst();
  // Only this claim's entry: a later claim of the same job (its lease had run out) stays held.
  const key = heldKey(table, claim.id);
  if (held.get(key)?.claim.lease === claim.lease) held.delete(key);
  const settled = Number(result.numUpdatedRows) === 1;
  if (!settled) leasesLost.inc({ queue: table });
  return settled;
}

/**
 * Gives back every lease this process still holds (SIGTERM, after in-flight jobs had their grace):
 * another worker takes the jobs at once instead of after WORKER_LEASE_SECONDS. Only a lease that is
 * still ours is cleared; an expired one (already another worker's) is left alone. Returns how many.
 */
export async function releaseHeldLeases(db: Executor, now: number): Promise<number> {
  const q = db as unknown as AnyQueue;
  let released = 0;
  for (const [key, { table, claim }] of held) {
    held.delete(key);
    if (claim.lease <= now) continue;
    const result = await q
      .updateTable(table)
      .set({ locked_until: null })
      .where('id', '=', claim.id)
      .where('status', '=', 'queued')
      .where('locked_until', '=', claim.lease)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 1) {
      released++;
      leasesReleased.inc({ queue: table });
    }
  }
  return released;
}
