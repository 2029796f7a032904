import { BriefReuse } from '../../storage/brief-reuse.ts';
import { donations } from '../../storage/payments.ts';
import type { Clocked, OnDatabase, Store } from '../ports.ts';

export interface DonorWall {
  total_usd: number;
  donor_count: number;
  recent: { name: string; amount_usd: number; message: string | null; at: string }[];
}

/**
 * Totals over every recorded donation; the recent list shows only donors who agreed to be shown
 * (the others count toward the total as "anonymous" and are never named).
 */
const wallReads = new BriefReuse<DonorWall>(2000);

/** A donation recorded through this instance shows on its wall at once. */
export function forgetDonorWall(deps: Parameters<typeof wallReads.forget>[0]): void {
  wallReads.forget(deps);
}

/** Reused for up to 2 s per instance and limit (a public read that changes rarely). */
export function donorWall(deps: Store & OnDatabase & Clocked, limit: number): DonorWall | Promise<DonorWall> {
  return wallReads.get(deps, String(limit), () => readDonorWall(deps, limit));
}

async function readDonorWall(deps: Store, limit: number): Promise<DonorWall> {
  const totals = await donations.totals(deps.db);
  const recent = await donations.recentPublic(deps.db, limit);
  return {
    total_usd: totals.cents / 100,
    donor_count: totals.donors,
    recent: recent.map((row) => ({
      name: row.donor_name,
      amount_usd: Number(row.amount_cents) / 100,
      message: row.message,
      at: new Date(Number(row.created_at)).toISOString(),
    })),
  };
}
