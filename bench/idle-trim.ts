// What the idle trim saves and costs (MEMORY_TRIM_IDLE_MS, src/memory-trim.ts). First, the resident
// size of an instance on the demo database with every setting at its default, just after the start
// and once it has been idle past the trim's window. Then the bearer read served by two instances of this tree
// in interleaved rounds, one left idle until it has trimmed (MEMORY_TRIM_IDLE_MS=30000) and one with
// the trim off. Each round loads one of them while the other idles for less than the trim's window,
// so neither trims again in between.
// Usage: node bench/idle-trim.ts   (BENCH_ROUNDS, default 4)
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  benchEnvironment,
  cli,
  interleavedRounds,
  mintBenchToken,
  type RoundSide,
  residentMb,
  startProcess,
} from './support.ts';

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
const sideOf = (side: typeof trimming): RoundSide => ({
  label: side.label,
  server: side.server,
  request: {
    url: `${side.server.url}/api/agent/setup-check`,
    headers: { authorization: `Bearer ${side.token}` },
  },
  note: () => `resident ${residentMb(side.server.child.pid!)} MB`,
});
// The change printed last is the trimmed instance's against the untrimmed one.
await interleavedRounds('bearer read', [sideOf(keeping), sideOf(trimming)], rounds);
for (const side of [trimming, keeping]) await side.server.stop();
