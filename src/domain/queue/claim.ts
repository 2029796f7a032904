import { leaseExpiries, leasesLost, leasesReleased } from '../../core/metrics.ts';
import { type QueueTable, queue } from '../../storage/queue.ts';
import type { Executor } from '../../storage/schema.ts';

export type { QueueTable };

export interface Claim {
  id: string;
  /** The lease's expiry: only the holder of this exact lease may settle the job. */
  lease: number;
}

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
  // A job that failed before settling keeps its entry until its lease has run out.
  for (const [key, entry] of held) if (entry.claim.lease <= now) held.delete(key);
  const candidates = await queue.due(db, table, now, limit);
  const claims: Claim[] = [];
  const lease = now + leaseMs;
  for (const { id, locked_until } of candidates) {
    if (!(await queue.lease(db, table, id, now, lease))) continue;
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
  const settled = await queue.settle(trx, table, claim.id, claim.lease, changes);
  // Only this claim's entry: a later claim of the same job (its lease had run out) stays held.
  const key = heldKey(table, claim.id);
  if (held.get(key)?.claim.lease === claim.lease) held.delete(key);
  if (!settled) leasesLost.inc({ queue: table });
  return settled;
}

/**
 * Gives back every lease this process still holds (SIGTERM, after in-flight jobs had their grace):
 * another worker takes the jobs at once instead of after WORKER_LEASE_SECONDS. Only a lease that is
 * still ours is cleared; an expired one (already another worker's) is left alone. Returns how many.
 */
export async function releaseHeldLeases(db: Executor, now: number): Promise<number> {
  let released = 0;
  for (const [key, { table, claim }] of held) {
    held.delete(key);
    if (claim.lease <= now) continue;
    if (await queue.settle(db, table, claim.id, claim.lease, {})) {
      released++;
      leasesReleased.inc({ queue: table });
    }
  }
  return released;
}
