// The process's Prometheus registry, and the counters lower layers bump as things happen (a lease
// that ran out, an idempotent replay). Only bounded, non-identifying labels: an operation id, a
// surface, a queue, an error kind; never a token, member, e-mail or query text.
import { Counter, Registry } from 'prom-client';

/** Every metric this process reports; served by src/surfaces/metrics-endpoint.ts. */
export const metricsRegistry = new Registry();

export const leaseExpiries = new Counter({
  name: 'agent_commons_worker_lease_expiries_total',
  help: 'Queued jobs claimed again after the lease of the worker that held them ran out (a worker died or stalled).',
  labelNames: ['queue'] as const,
  registers: [metricsRegistry],
});

export const leasesLost = new Counter({
  name: 'agent_commons_worker_leases_lost_total',
  help: 'Jobs a worker could not settle because its lease had run out and another worker took them.',
  labelNames: ['queue'] as const,
  registers: [metricsRegistry],
});

export const leasesReleased = new Counter({
  name: 'agent_commons_worker_leases_released_total',
  help: 'Leases given back unfinished by a draining instance, so another worker takes the jobs at once.',
  labelNames: ['queue'] as const,
  registers: [metricsRegistry],
});

export const idempotencyReplays = new Counter({
  name: 'agent_commons_idempotency_replays_total',
  help: 'Retries with an Idempotency-Key answered with the stored first answer.',
  registers: [metricsRegistry],
});

export const idempotencyConflicts = new Counter({
  name: 'agent_commons_idempotency_in_flight_conflicts_total',
  help: 'Retries with an Idempotency-Key refused 409 because the first call was still running.',
  registers: [metricsRegistry],
});
