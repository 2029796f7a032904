import { MS } from '../clock.ts';
import { isContention, isDependencyUnavailable, isStorageUnwritable } from '../core/errors.ts';
import { expireStaleGrants } from '../domain/auth/device-grants.ts';
import { refreshEvents } from '../domain/events/feed.ts';
import { deliverDueRsvps } from '../domain/events/rsvp-delivery.ts';
import { settleQueuedBookings } from '../domain/resources/booking-settlement.ts';
import { sweepRetention } from '../domain/retention/sweep.ts';
import type { Deps } from '../operations/services.ts';
import { counters } from '../storage/counters.ts';

export interface WorkerLog {
  info(details: Record<string, unknown>, message: string): void;
  warn(details: Record<string, unknown>, message: string): void;
}

interface Job {
  name: string;
  everyMs: number;
  run(): Promise<unknown>;
}

/** The background work of one instance: each job on its own timer, never two runs of a job at once. */
export function startScheduler(
  deps: Deps,
  log: WorkerLog,
  options: { workers: boolean },
): () => Promise<void> {
  // While the database is away every pass of every job fails alike: that is logged once per job and
  // outage, and the job's next successful pass says it resumed. The queues need nothing else: a job
  // claimed when the connection dropped stays leased until WORKER_LEASE_SECONDS pass, then is retried.
  const waiting = new Set<string>();
  const failedInPass = new Set<string>();
  const onError = (job: string, item?: string) => (error: unknown) => {
    if (item) failedInPass.add(job);
    const what = item ? `${job} ${item}` : job;
    // Not an outage: the database is up, and the job's next pass repeats what was rolled back.
    if (isContention(error))
      return log.warn(
        { job: what, cause: (error as Error).message },
        'background job lost to concurrent writes; its next pass repeats it',
      );
    // A database that cannot write (a full disk) fails every pass alike too: waited out the same way.
    if (!isDependencyUnavailable(error) && !isStorageUnwritable(error))
      return log.warn({ err: error, job: what }, 'background job failed');
    if (waiting.has(job)) return;
    waiting.add(job);
    log.warn({ job, cause: (error as Error).message }, 'background job waits for the database');
  };
  const succeeded = (job: string) => {
    if (failedInPass.delete(job)) return;
    if (waiting.delete(job)) log.warn({ job }, 'background job resumed');
  };
  const jobs: Job[] = [
    {
      name: 'events refresh',
      everyMs: deps.config.eventsRefreshMinutes * MS.minute,
      run: async () => log.info({ ...(await refreshEvents(deps)) }, 'events cache refreshed'),
    },
    { name: 'counter sweep', everyMs: MS.minute, run: () => counters.sweep(deps.db, deps.clock.now()) },
    { name: 'device grant sweep', everyMs: MS.minute, run: () => expireStaleGrants(deps) },
  ];
  if (deps.config.retention.sweepMinutes > 0)
    jobs.push({
      name: 'retention sweep',
      everyMs: deps.config.retention.sweepMinutes * MS.minute,
      // Bounded per run (1000 batches a kind): a large backlog is worked off over several runs.
      run: async () => {
        const report = await sweepRetention(deps, { maxBatches: 1000 });
        const removed = Object.fromEntries(report.kinds.filter((k) => k.rows).map((k) => [k.kind, k.rows]));
        if (Object.keys(removed).length) log.info({ removed }, 'retention sweep removed expired records');
      },
    });
  if (options.workers) {
    const every = deps.config.workerIntervalSeconds * MS.second;
    jobs.push(
      { name: 'rsvp delivery', everyMs: every, run: () => deliverDueRsvps(deps) },
      {
        name: 'booking settlement',
        everyMs: every,
        run: () => settleQueuedBookings(deps, 50, (error, id) => onError('booking settlement', id)(error)),
      },
    );
  }
  const timers: NodeJS.Timeout[] = [];
  const running = new Set<Promise<unknown>>();
  for (const job of jobs) {
    let busy = false;
    const tick = () => {
      if (busy) return;
      busy = true;
      const run = job
        .run()
        .then(() => succeeded(job.name), onError(job.name))
        .finally(() => {
          busy = false;
          running.delete(run);
        });
      running.add(run);
    };
    tick();
    const timer = setInterval(tick, job.everyMs);
    timer.unref();
    timers.push(timer);
  }
  return async () => {
    for (const timer of timers) clearInterval(timer);
    await Promise.allSettled([...running]);
  };
}
