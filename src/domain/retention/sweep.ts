import { MS } from '../../clock.ts';
import { RETENTION_KINDS, type RetentionKind, retention } from '../../storage/retention.ts';
import type { Clocked, Configured, Store } from '../ports.ts';

/** What one kind's sweep did (or, in a dry run, would do). */
export interface KindReport {
  kind: RetentionKind;
  /** The window in days; 0: kept forever, nothing looked at. */
  days: number;
  /** Rows older than this (epoch ms) are due; null when the kind is kept forever. */
  cutoff: number | null;
  /** Rows deleted, or in a dry run the rows due. */
  rows: number;
  /** The run stopped at its batch bound with rows still due: the next run goes on. */
  more: boolean;
}

export interface SweepReport {
  /** false: another instance held the sweep's lease, nothing was done. */
  ran: boolean;
  dryRun: boolean;
  kinds: KindReport[];
}

export interface SweepOptions {
  dryRun?: boolean;
  /** Rows a batch deletes (default 500). */
  batch?: number;
  /** Batches per kind in one run (default: until none is due). */
  maxBatches?: number;
  /** The pause between batches, in which requests waiting on the database run (default 5 ms). */
  pauseMs?: number;
  /** How long the lease is held past each batch (default 5 minutes). */
  leaseMs?: number;
  /** Called after each batch (tests use it to write while a sweep runs). */
  afterBatch?: (kind: RetentionKind, deleted: number) => Promise<void> | void;
}

type SweepPort = Store & Clocked & Configured<'retention'>;

function cutoffOf(deps: SweepPort, kind: RetentionKind, now: number): number | null {
  const days = deps.config.retention[kind];
  return days > 0 ? now - days * MS.day : null;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Deletes what the retention settings say is past its window, kind by kind, in small batches with
 * a pause between them, so no statement holds a lock for long and, on SQLite, requests run between
 * batches. Of several instances only the one holding the lease sweeps; it renews the lease at each
 * batch and stops if it lost it. A dry run takes no lease and deletes nothing: it counts.
 */
export async function sweepRetention(deps: SweepPort, options: SweepOptions = {}): Promise<SweepReport> {
  const dryRun = options.dryRun ?? false;
  const batch = options.batch ?? 500;
  const maxBatches = options.maxBatches ?? Number.POSITIVE_INFINITY;
  const pauseMs = options.pauseMs ?? 5;
  const leaseMs = options.leaseMs ?? 5 * MS.minute;
  const now = deps.clock.now();
  const kinds: KindReport[] = [];
  if (dryRun) {
    for (const kind of RETENTION_KINDS) {
      const cutoff = cutoffOf(deps, kind, now);
      const rows = cutoff === null ? 0 : await retention.countDue(deps.db, kind, cutoff);
      kinds.push({ kind, days: deps.config.retention[kind], cutoff, rows, more: false });
    }
    return { ran: true, dryRun, kinds };
  }
  let held = now + leaseMs;
  if (!(await retention.takeLease(deps.db, now, held))) return { ran: false, dryRun, kinds };
  try {
    for (const kind of RETENTION_KINDS) {
      const cutoff = cutoffOf(deps, kind, now);
      const report: KindReport = { kind, days: deps.config.retention[kind], cutoff, rows: 0, more: false };
      kinds.push(report);
      if (cutoff === null) continue;
      for (let done = 0; ; done++) {
        if (done >= maxBatches) {
          report.more = true;
          break;
        }
        const deleted = await retention.deleteBatch(deps.db, kind, cutoff, batch);
        report.rows += deleted;
        await options.afterBatch?.(kind, deleted);
        if (deleted < batch) break;
        await pause(pauseMs);
        const until = Math.max(deps.clock.now() + leaseMs, held + 1);
        if (!(await retention.renewLease(deps.db, held, until))) return { ran: true, dryRun, kinds };
        held = until;
      }
    }
    return { ran: true, dryRun, kinds };
  } finally {
    await retention.releaseLease(deps.db, held);
  }
}
