// Prometheus metrics, served where the operator chose (METRICS_PATH on the main port, METRICS_PORT on a
// port of their own) behind METRICS_BEARER. The pipeline's counts (src/operations/pipeline/metrics.ts)
// and the counters of src/core/metrics.ts are kept as things happen; what the database and the
// research index hold now is read at scrape time, by the gauges below. prom-client, which renders
// them, is loaded only where metrics are served (docs/deployment.md, "Only what is used is loaded").
import { timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import { scrapedMetrics } from '../core/metrics.ts';
import { type QueueBacklog, queueBacklog } from '../domain/queue/backlog.ts';
import type { CorpusIndexState } from '../domain/research/corpus-index.ts';
import type { Deps } from '../operations/services.ts';
import { sha256 } from '../secrets.ts';

type PromClient = typeof import('prom-client');

/** CPU, memory, event-loop lag, handles, GC: collected once per process, whatever the number of apps. */
let processMetrics: Registry | undefined;

/** The answer to one scrape: 401 without the bearer, otherwise the Prometheus text format. */
export type MetricsAnswer = { status: number; headers: Record<string, string>; body: string };

/**
 * Reads the metrics of this process with the state of `deps` (its database, its research index).
 * prom-client is imported now, so the process metrics (GC, event-loop lag) count from here on.
 */
export function metricsScraper(deps: Deps): (authorization: string | undefined) => Promise<MetricsAnswer> {
  const registry = import('prom-client').then((prom) => scrapeRegistry(prom, deps));
  // Awaited by every scrape, which answers 500 if it failed; not an unhandled rejection meanwhile.
  registry.catch(() => {});
  const expected = deps.config.metrics.bearer ? sha256(deps.config.metrics.bearer) : undefined;
  return async (authorization) => {
    if (expected && !bearerMatches(authorization, expected)) {
      return {
        status: 401,
        headers: {
          'www-authenticate': 'Bearer realm="metrics"',
          'content-type': 'text/plain; charset=utf-8',
        },
        body: 'The metrics need the bearer set in METRICS_BEARER.\n',
      };
    }
    const scraped = await registry;
    const headers: Record<string, string> = { 'content-type': scraped.contentType };
    return { status: 200, headers, body: await scraped.metrics() };
  };
}

function scrapeRegistry(prom: PromClient, deps: Deps): Registry {
  if (!processMetrics) {
    processMetrics = new prom.Registry();
    prom.collectDefaultMetrics({ register: processMetrics, prefix: 'agent_commons_' });
  }
  const kept = new prom.Registry();
  for (const { name, help, type, samples } of scrapedMetrics) {
    // A metric whose values prom-client asks for at scrape time (its collector interface).
    kept.registerMetric({
      name,
      help,
      type,
      get: async () => ({ name, help, type, values: samples(), aggregator: 'sum' }),
    } as never);
  }
  return prom.Registry.merge([processMetrics, kept, stateGauges(prom, deps)]);
}

function bearerMatches(authorization: string | undefined, expected: string): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (!match) return false;
  // Equal-length digests, so the comparison takes the same time whatever the bearer sent.
  return timingSafeEqual(Buffer.from(sha256(match[1]), 'hex'), Buffer.from(expected, 'hex'));
}

/** METRICS_PATH: the metrics on the app's own port. */
export function registerMetricsPath(app: FastifyInstance, deps: Deps): void {
  const path = deps.config.metrics.path;
  if (!path) return;
  const scrape = metricsScraper(deps);
  app.get(path, async (request, reply) => {
    const answer = await scrape(request.headers.authorization);
    return reply.code(answer.status).headers(answer.headers).send(answer.body);
  });
}

/** METRICS_PORT: the metrics on a port of their own; resolves with its address, or undefined when unset. */
export async function startMetricsServer(deps: Deps): Promise<{ url: string; server: Server } | undefined> {
  const { port, host } = deps.config.metrics;
  if (port === undefined) return undefined;
  const scrape = metricsScraper(deps);
  const server = createServer((request, response) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    scrape(request.headers.authorization).then(
      (answer) => response.writeHead(answer.status, answer.headers).end(answer.body),
      () => response.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return { url: `http://${shown}:${address.port}/metrics`, server };
}

/** What the database and the research index hold at the moment of the scrape. */
function stateGauges(prom: PromClient, deps: Deps): Registry {
  const registry = new prom.Registry();
  // The queue gauges are filled from one read per queue per scrape: the registry collects them
  // concurrently, so they share the read in progress.
  let reading: Promise<Backlogs> | undefined;
  const read = () =>
    (reading ??= readBacklogs(deps).finally(() => {
      reading = undefined;
    }));
  const queueGauge = (name: string, help: string, value: (backlog: QueueBacklog) => number) =>
    new prom.Gauge({
      name: `agent_commons_queue_${name}`,
      help,
      labelNames: ['queue'] as const,
      registers: [registry],
      async collect() {
        const backlogs = await read();
        this.reset();
        // A queue missing here could not be read (the database is away: /readyz says so).
        for (const [queue, backlog] of Object.entries(backlogs)) this.set({ queue }, value(backlog));
      },
    });
  queueGauge(
    'depth',
    'Jobs waiting in a queue (rsvps: RSVP delivery, bookings: booking decisions), due now or later.',
    (backlog) => backlog.queued,
  );
  queueGauge(
    'oldest_due_age_seconds',
    'How long the oldest job that is due has waited past its due time (0: none due).',
    (backlog) => backlog.oldestDueAgeSeconds,
  );
  queueGauge(
    'leased',
    'Jobs a worker holds a live lease on right now (any instance).',
    (backlog) => backlog.leased,
  );
  const poolUse = deps.database.poolUse;
  if (poolUse) {
    new prom.Gauge({
      name: 'agent_commons_db_pool_connections',
      help: 'PostgreSQL request pool: connections open, idle, the pool maximum, and queries waiting for a connection.',
      labelNames: ['state'] as const,
      registers: [registry],
      collect() {
        const use = poolUse();
        this.set({ state: 'open' }, use.total);
        this.set({ state: 'idle' }, use.idle);
        this.set({ state: 'in_use' }, use.total - use.idle);
        this.set({ state: 'waiting' }, use.waiting);
        this.set({ state: 'max' }, use.max);
      },
    });
  }
  researchIndexGauges(prom, deps, registry);
  return registry;
}

type Backlogs = Partial<Record<'rsvps' | 'bookings', QueueBacklog>>;

async function readBacklogs(deps: Deps): Promise<Backlogs> {
  const now = deps.clock.now();
  const backlogs: Backlogs = {};
  for (const queue of ['rsvps', 'bookings'] as const) {
    const backlog = await queueBacklog(deps.db, queue, now).catch(() => undefined);
    if (backlog) backlogs[queue] = backlog;
  }
  return backlogs;
}

function researchIndexGauges(prom: PromClient, deps: Deps, registry: Registry): void {
  const gauge = (name: string, help: string, value: (state: CorpusIndexState) => number) =>
    new prom.Gauge({
      name: `agent_commons_research_index_${name}`,
      help,
      registers: [registry],
      collect() {
        const state = deps.corpus.state();
        this.set(state ? value(state) : 0);
      },
    });
  gauge(
    'passages',
    'Passages in the research index this instance answers from (0 until its first build).',
    (s) => s.passages,
  );
  gauge(
    'generation',
    'The corpus generation that index was built from (every corpus change bumps it).',
    (s) => Number(s.generation) || 0,
  );
  gauge('build_seconds', 'How long the last build of the research index took.', (s) => s.buildMs / 1000);
  gauge(
    'built_timestamp_seconds',
    'When the last build of the research index finished (Unix time).',
    (s) => s.builtAt / 1000,
  );
  gauge('rebuilding', '1 while a newer corpus generation is being indexed.', (s) => (s.rebuilding ? 1 : 0));
}
