// What metrics cost per request, against the bearer read (GET /api/agent/setup-check with a bearer)
// (target: under 3% of its server CPU). Two parts:
//  - recording: every call pays recordCallMetrics (src/operations/pipeline/metrics.ts) and one
//    performance.now(), whether or not metrics are served; timed here in-process, per call;
//  - serving: the bearer read on a server without metrics, then on one with METRICS_PATH set and scraped every
//    second (Prometheus usually scrapes every 15 s: this is the pessimistic case), rounds alternated.
// BENCH_ONLY=metrics runs it alone.
import { recordCallMetrics } from '../src/operations/pipeline/metrics.ts';
import { OPERATIONS } from '../src/operations/registry.ts';
import type { CallRequest } from '../src/operations/types.ts';
import { cpuMicros, type Figures, load, median, startProcess } from './support.ts';

const SCRAPE_BEARER = 'bench-scrape-bearer-0123456789';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

/** Nanoseconds per call of what runOperation adds for metrics (median of five timed runs). */
export function recordingNanos(calls = 2_000_000): number {
  const op = OPERATIONS.find((candidate) => candidate.path === '/api/agent/setup-check')!;
  const request = { surface: 'rest', requestId: 'bench', ip: '127.0.0.1', input: {} } as CallRequest;
  const refused = { status: 401, body: { error_kind: 'unauthorized' }, headers: {} };
  const answered = { status: 200, body: {}, headers: {} };
  const run = () => {
    const started = process.hrtime.bigint();
    for (let i = 0; i < calls; i++)
      recordCallMetrics(op, request, i % 100 === 0 ? refused : answered, performance.now());
    return Number(process.hrtime.bigint() - started) / calls;
  };
  run(); // warm up: the optimizing compiler has seen the loop
  const timed = Array.from({ length: 5 }, run).sort((a, b) => a - b);
  return timed[2];
}

export interface MetricsRound {
  plain: Figures;
  served: Figures;
  /** Server CPU of one scrape of the served instance, in µs (measured while idle). */
  scrapeMicros: number;
}

async function scrapeCost(url: string, pid: number): Promise<number> {
  const before = cpuMicros(pid);
  for (let i = 0; i < 50; i++) {
    const response = await fetch(url, { headers: { authorization: `Bearer ${SCRAPE_BEARER}` } });
    if (response.status !== 200) throw new Error(`scrape: ${response.status}`);
    await response.text();
  }
  return Math.round((cpuMicros(pid) - before) / 50);
}

export async function metricsRounds(env: Record<string, string>, token: string): Promise<MetricsRound[]> {
  const rounds: MetricsRound[] = [];
  const setupCheck = (url: string) => ({
    url: `${url}/api/agent/setup-check`,
    headers: { authorization: `Bearer ${token}` },
  });
  for (let round = 0; round < ROUNDS; round++) {
    const plain = await startProcess(['bin/agent-commons.js', 'serve', '--no-seed'], env, '/healthz');
    const plainFigures = await load(
      'bearer read, metrics not served',
      setupCheck(plain.url),
      plain.child.pid,
    );
    await plain.stop();
    const served = await startProcess(
      ['bin/agent-commons.js', 'serve', '--no-seed'],
      { ...env, METRICS_PATH: '/metrics', METRICS_BEARER: SCRAPE_BEARER },
      '/healthz',
    );
    const scrapeUrl = `${served.url}/metrics`;
    const scraper = setInterval(() => {
      fetch(scrapeUrl, { headers: { authorization: `Bearer ${SCRAPE_BEARER}` } })
        .then((response) => response.text())
        .catch(() => {});
    }, 1000);
    const servedFigures = await load(
      'bearer read, metrics scraped every 1 s',
      setupCheck(served.url),
      served.child.pid,
    );
    clearInterval(scraper);
    const scrapeMicros = await scrapeCost(scrapeUrl, served.child.pid!);
    await served.stop();
    rounds.push({ plain: plainFigures, served: servedFigures, scrapeMicros });
  }
  return rounds;
}

export function metricsSummary(rounds: MetricsRound[], nanos: number): string {
  const plain = median(rounds.map((r) => r.plain.cpuPerRequest ?? 0));
  const served = median(rounds.map((r) => r.served.cpuPerRequest ?? 0));
  const scrape = median(rounds.map((r) => r.scrapeMicros));
  const perSecond = median(rounds.map((r) => r.served.requestsPerSecond));
  return [
    `metrics recording: ${nanos.toFixed(0)} ns per call = ${((100 * nanos) / 1000 / plain).toFixed(2)}% of the bearer read's ${plain} µs server CPU (target < 3%)`,
    `bearer read server CPU per request, median of ${rounds.length} rounds: ${plain} µs without serving metrics, ${served} µs scraped every second`,
    `one scrape: ${scrape} µs of server CPU; at ${perSecond} req/s and one scrape a second that is ${(scrape / perSecond).toFixed(3)} µs per request`,
  ].join('\n');
}
