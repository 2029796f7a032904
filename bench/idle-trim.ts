// What the idle trim saves and costs (MEMORY_TRIM_IDLE_MS, src/memory-trim.ts). First, the resident
// size of an instance on the demo database with every setting at its default, just after the start
// and once it has been idle past the trim's window. Then row (b) served by two instances of this tree
// in interleaved rounds, one left idle until it has trimmed (MEMORY_TRIM_IDLE_MS=30000) and one with
// the trim off. Each round loads one of them while the other idles for less than the trim's window,
// so neither trims again in between.
// Usage: node bench/idle-trim.ts   (BENCH_ROUNDS, default 4)
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchEnvironment, cli, load, mintBenchToken, residentMb, startProcess } from './support.ts';

const rounds = Number(process.env.BENCH_ROUNDS ?? 4);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

{
  const demo = await startProcess(
    ['bin/agent-commons.js', 'serve'],
    { DATABASE_URL: `sqlite:${join(mkdtempSync(join(tmpdir(), 'agent-commons-idle-')), 'demo.db')}` },
    '/healthz',
  );
  await sleep(5000);
  const afterStart = residentMb(demo.child.pid!);
  // The default window is 30 s, checked every 30 s: idle from the start, the trim comes within 60 s.
  await sleep(65_000);
  console.log(
    `idle resident, demo database, default settings: ${afterStart} MB 5 s after listening, ` +
      `${residentMb(demo.child.pid!)} MB 70 s after (target <= 120 MB)`,
  );
  await demo.stop();
}

async function instance(label: string, settings: Record<string, string>) {
  const { env } = benchEnvironment(`agent-commons-trim-${label}-`);
  cli(['migrate'], env);
  const { token } = mintBenchToken(env, label, 'read:public', false);
  const server = await startProcess(
    ['bin/agent-commons.js', 'serve', '--no-seed'],
    { ...env, ...settings },
    '/healthz',
  );
  return { label, server, token };
}

const trimming = await instance('trimmed', { MEMORY_TRIM_IDLE_MS: '30000' });
const keeping = await instance('untrimmed', { MEMORY_TRIM_IDLE_MS: '0' });
// The trim comes once the start is done (with the setting on); the
// pages leave a few seconds after it. (Its log line is at info, where every request is logged too.)
const startedAt = Date.now();
const trimmedBy = (mb: number) =>
  residentMb(keeping.server.child.pid!) - residentMb(trimming.server.child.pid!) >= mb;
while (!trimmedBy(20)) {
  if (Date.now() - startedAt > 120_000) throw new Error('no trim within two minutes of the start');
  await sleep(1000);
}
console.log(
  `trimmed: its pages left ${Math.round((Date.now() - startedAt) / 1000)} s after the start; resident ${residentMb(trimming.server.child.pid!)} MB ` +
    `against ${residentMb(keeping.server.child.pid!)} MB untrimmed`,
);
const figures: Record<string, { rps: number; cpu: number }[]> = { trimmed: [], untrimmed: [] };
for (let round = 1; round <= rounds; round++) {
  for (const side of round % 2 ? [trimming, keeping] : [keeping, trimming]) {
    const result = await load(
      `${round}: (b) ${side.label}`,
      { url: `${side.server.url}/api/agent/setup-check`, headers: { authorization: `Bearer ${side.token}` } },
      side.server.child.pid,
    );
    figures[side.label].push({ rps: result.requestsPerSecond, cpu: result.cpuPerRequest ?? 0 });
    console.log(
      `round ${round} ${side.label}: ${result.requestsPerSecond} req/s, ${result.cpuPerRequest} µs/req, ` +
        `${result.non2xx} non-2xx, resident ${residentMb(side.server.child.pid!)} MB`,
    );
  }
}
for (const side of [trimming, keeping]) await side.server.stop();
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const [trimmedRps, untrimmedRps] = [
  median(figures.trimmed.map((f) => f.rps)),
  median(figures.untrimmed.map((f) => f.rps)),
];
console.log(
  `(b) medians: after a trim ${trimmedRps} req/s (${median(figures.trimmed.map((f) => f.cpu))} µs), untrimmed ` +
    `${untrimmedRps} req/s (${median(figures.untrimmed.map((f) => f.cpu))} µs): ` +
    `${(((trimmedRps - untrimmedRps) / untrimmedRps) * 100).toFixed(1)} %`,
);
