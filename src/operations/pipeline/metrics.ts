// Calls by operation, surface and outcome, latency per operation, refusals by kind: recorded once per
// call by runOperation, whatever the surface (REST routes, batch items, MCP, A2A,
// the pages, the CLI). Recording is a few array increments on plain numbers; prom-client only sees
// them when /metrics is scraped (its labelled children hash their labels on every increment, which
// would cost more than the rest of a cached read's metrics put together: docs/benchmarks.md).
import { type Sample, scrapedMetric } from '../../core/metrics.ts';
import type { CallRequest, Operation } from '../types.ts';
import type { CallResult } from './answer.ts';

/** The surface label: the request's surface, or `batch` for a REST batch's items. */
const SURFACES = ['rest', 'mcp', 'a2a', 'batch', 'web', 'cli'] as const;
const SURFACE_INDEX: Record<CallRequest['surface'], number> = { rest: 0, mcp: 1, a2a: 2, web: 4, cli: 5 };
const BATCH = 3;
/** ok: answered below 400; refused: a 4xx (its kind is counted in refusals); error: a 5xx. */
const OUTCOMES = ['ok', 'refused', 'error'] as const;

/** Seconds; the upper bounds of the latency buckets, from a cached read to a slow provider call. */
const BUCKETS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

/** One operation's counts since the process started. */
class Tally {
  /** calls[surface * 3 + outcome] */
  readonly calls = new Float64Array(SURFACES.length * OUTCOMES.length);
  /** Calls per latency bucket (not cumulative); the last slot is above the largest bound. */
  readonly buckets = new Float64Array(BUCKETS.length + 1);
  seconds = 0;
}

const tallies = new Map<string, Tally>();
/** `surface kind` → refusals. */
const refusals = new Map<string, number>();

/** Records one answered call; `started` is performance.now() when runOperation began. */
export function recordCallMetrics(
  op: Operation,
  request: CallRequest,
  result: CallResult,
  started: number,
): void {
  let tally = tallies.get(op.id);
  if (tally === undefined) {
    tally = new Tally();
    tallies.set(op.id, tally);
  }
  // Batch items drop their headers; so does the CLI, which keeps its own label.
  const surface = request.headersUnused && request.surface !== 'cli' ? BATCH : SURFACE_INDEX[request.surface];
  const status = result.status;
  const outcome = status < 400 ? 0 : status < 500 ? 1 : 2;
  tally.calls[surface * 3 + outcome]++;
  if (outcome === 1) countRefusal(surface, result.body);
  const seconds = (performance.now() - started) / 1000;
  tally.seconds += seconds;
  let bucket = 0;
  while (bucket < BUCKETS.length && seconds > BUCKETS[bucket]) bucket++;
  tally.buckets[bucket]++;
}

function countRefusal(surface: number, body: unknown): void {
  const kind = (body as { error_kind?: unknown } | undefined)?.error_kind;
  // error_kind is the closed set of core/errors.ts; anything else is not a label value.
  const key = `${SURFACES[surface]} ${typeof kind === 'string' ? kind : 'other'}`;
  refusals.set(key, (refusals.get(key) ?? 0) + 1);
}

scrapedMetric(
  'agent_commons_requests_total',
  'Operation calls answered, by operation, surface (rest, mcp, a2a, batch, web, cli) and outcome (ok below 400, refused 4xx, error 5xx).',
  'counter',
  () => {
    const samples: Sample[] = [];
    for (const [operation, tally] of tallies)
      tally.calls.forEach((value, slot) => {
        if (value === 0) return;
        const surface = SURFACES[Math.floor(slot / 3)];
        samples.push({ labels: { operation, surface, outcome: OUTCOMES[slot % 3] }, value });
      });
    return samples;
  },
);

scrapedMetric(
  'agent_commons_refusals_total',
  'Calls answered 4xx, by surface and error_kind (unauthorized, insufficient_scope, tier, rate_limit, validation, …).',
  'counter',
  () =>
    [...refusals].map(([key, value]) => {
      const [surface, kind] = key.split(' ');
      return { labels: { surface, kind }, value };
    }),
);

scrapedMetric(
  'agent_commons_request_duration_seconds',
  'Time from the start of the pipeline to the answer, per operation (serialization and the network not included).',
  'histogram',
  () => {
    const samples: Sample[] = [];
    const name = 'agent_commons_request_duration_seconds';
    for (const [operation, tally] of tallies) {
      let cumulative = 0;
      tally.buckets.forEach((count, index) => {
        cumulative += count;
        const le = index < BUCKETS.length ? BUCKETS[index] : '+Inf';
        samples.push({ metricName: `${name}_bucket`, labels: { operation, le }, value: cumulative });
      });
      samples.push({ metricName: `${name}_sum`, labels: { operation }, value: tally.seconds });
      samples.push({ metricName: `${name}_count`, labels: { operation }, value: cumulative });
    }
    return samples;
  },
);

/**
 * The operations with the longest mean answer time on this instance since it started (at least
 * `minCalls` calls each, so one slow call does not make a ranking): for the operator dashboard.
 */
export function slowestOperations(
  limit: number,
  minCalls = 5,
): { operation: string; calls: number; meanMs: number }[] {
  const ranked: { operation: string; calls: number; meanMs: number }[] = [];
  for (const [operation, tally] of tallies) {
    let calls = 0;
    for (const count of tally.calls) calls += count;
    if (calls >= minCalls) ranked.push({ operation, calls, meanMs: (tally.seconds / calls) * 1000 });
  }
  return ranked.sort((a, b) => b.meanMs - a.meanMs).slice(0, limit);
}
