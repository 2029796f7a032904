import { MS } from '../clock.ts';
import type { Deps } from '../deps.ts';
import { refreshEvents } from '../domain/events/feed.ts';
import { deliverDueRsvps } from '../domain/events/rsvp-delivery.ts';
import { settleQueuedBookings } from '../domain/resources/booking-settlement.ts';
import { counters } from '../http/rate-limit.ts';

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
  const onError = (job: string) => (error: unknown) => log.warn({ err: error, job }, 'background job failed');
  const jobs: Job[] = [
    {
      name: 'events refresh',
      everyMs: deps.config.eventsRefreshMinutes * MS.minute,
      run: async () => log.info({ ...(await refreshEvents(deps)) }, 'events cache refreshed'),
    },
    { name: 'counter sweep', everyMs: MS.minute, run: () => counters.sweep(deps.db, deps.clock.now()) },
  ];
  if (options.workers) {
    const every = deps.config.workerIntervalSeconds * MS.second;
    jobs.push(
      { name: 'rsvp delivery', everyMs: every, run: () => deliverDueRsvps(deps) },
      {
        name: 'booking settlement',
        everyMs: every,
        run: () => settleQueuedBookings(deps, 50, (error, id) => onError(`booking ${id}`)(error)),
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
        .catch(onError(job.name))
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
