// The process's metrics, and the counters lower layers bump as things happen (a lease that ran out,
// an idempotent replay), kept as plain numbers and read when /metrics is scraped. Only bounded,
// non-identifying labels: an operation id, a surface, a queue, an error kind; never a token, member,
// e-mail or query text.

/** One sample of a metric as the Prometheus text format shows it. */
export interface Sample {
  labels: Record<string, string | number>;
  value: number;
  /** For a histogram's `_bucket`, `_sum` and `_count` lines. */
  metricName?: string;
}

/** A metric read at scrape time from numbers kept as plain values as things happen. */
export interface ScrapedMetric {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  samples(): Sample[];
}

/**
 * Every metric this process keeps, declared as its module loads. The metrics endpoint
 * (src/surfaces/metrics-endpoint.ts) hands them to prom-client, which only an instance serving
 * metrics loads, and only a scrape reads them.
 */
export const scrapedMetrics: ScrapedMetric[] = [];

export function scrapedMetric(
  name: string,
  help: string,
  type: ScrapedMetric['type'],
  samples: () => Sample[],
): void {
  scrapedMetrics.push({ name, help, type, samples });
}

/** A counter kept as plain numbers: one, or one per value of its single label. */
class PlainCounter<Label extends string = never> {
  readonly #counts = new Map<string, number>();

  constructor(name: string, help: string, label?: Label) {
    // Without a label, the counter is shown from 0 on; with one, each value once it is counted.
    if (label === undefined) this.#counts.set('', 0);
    scrapedMetric(name, help, 'counter', () =>
      [...this.#counts].map(([value, count]) => ({
        labels: label === undefined ? {} : { [label]: value },
        value: count,
      })),
    );
  }

  inc(...labels: [Label] extends [never] ? [] : [Record<Label, string>]): void {
    const [values] = labels as [Record<string, string>?];
    const key = values === undefined ? '' : (Object.values(values)[0] ?? '');
    this.#counts.set(key, (this.#counts.get(key) ?? 0) + 1);
  }
}

export const leaseExpiries = new PlainCounter(
  'agent_commons_worker_lease_expiries_total',
  'Queued jobs claimed again after the lease of the worker that held them ran out (a worker died or stalled).',
  'queue',
);

export const leasesLost = new PlainCounter(
  'agent_commons_worker_leases_lost_total',
  'Jobs a worker could not settle because its lease had run out and another worker took them.',
  'queue',
);

export const leasesReleased = new PlainCounter(
  'agent_commons_worker_leases_released_total',
  'Leases given back unfinished by a draining instance, so another worker takes the jobs at once.',
  'queue',
);

export const idempotencyReplays = new PlainCounter(
  'agent_commons_idempotency_replays_total',
  'Retries with an Idempotency-Key answered with the stored first answer.',
);

export const idempotencyConflicts = new PlainCounter(
  'agent_commons_idempotency_in_flight_conflicts_total',
  'Retries with an Idempotency-Key refused 409 because the first call was still running.',
);
