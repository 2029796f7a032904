// The bearer read's own code in two checkouts side by side in one process: each tree's pipeline answers setup-check
// with a bearer (no socket, no node:http, no Fastify, as bench/own-code.ts), in alternating rounds of 50 000
// reads, and the median of the per-round differences is printed. A change of a microsecond in our
// own code shows here when the loaded server's figures move more than that from minute to minute.
// BENCH_CREDENTIAL=session reads /api/tier/me with a browser session's cookie instead (the session membership read),
// BENCH_CREDENTIAL=none the upcoming list with no credential (the anonymous events list), BENCH_CREDENTIAL=lookup
// one event of that list by its URL (/api/events/get), with no credential.
// Usage: BENCH_COMPARE_DIR=/tmp/before [BENCH_ROUNDS=30] [BENCH_CREDENTIAL=bearer|session|none|lookup]
//        node bench/own-code-pairs.ts
import { systemClock } from '../src/clock.ts';
import { createSession, SESSION_COOKIE } from '../src/domain/auth/sessions.ts';
import { openDatabase } from '../src/storage/database.ts';
import { seedMemberReads } from './member-reads.ts';
import { pipelineReader } from './own-code.ts';
import { benchEnvironment, cli, median, mintBenchToken } from './support.ts';

const other = process.env.BENCH_COMPARE_DIR;
if (!other) throw new Error('set BENCH_COMPARE_DIR to the other checkout');
const rounds = Number(process.env.BENCH_ROUNDS ?? 30);
const credential = process.env.BENCH_CREDENTIAL ?? 'bearer';
const paths: Record<string, string> = {
  bearer: '/api/agent/setup-check',
  session: '/api/tier/me',
  none: '/api/events/upcoming',
  lookup: '/api/events/get?url=https://lu.ma/bench-3',
};
const path = paths[credential];
if (!path) throw new Error(`BENCH_CREDENTIAL=${credential}: bearer, session, none or lookup`);
const READS_PER_ROUND = 50_000;
/** The first rounds warm the JIT and are left out of the medians. */
const WARM_UP_ROUNDS = 4;

const { env } = benchEnvironment('agent-commons-own-code-pairs-');
cli(['migrate'], env);
// The events the anonymous events list reads, as the full run seeds them.
if (credential === 'none' || credential === 'lookup') await seedMemberReads(env.DATABASE_URL);
const { token, memberId } = mintBenchToken(env, 'pairs', 'read:public');
const database = openDatabase(env.DATABASE_URL);
const session = await createSession(database.db, systemClock, memberId);
await database.close();
const credentials: Record<string, Record<string, string>> = {
  bearer: { authorization: `Bearer ${token}` },
  session: { cookie: `${SESSION_COOKIE}=${session}` },
  none: {},
  lookup: {},
};
const headers = credentials[credential];

const sides = [];
for (const [label, dir] of [
  ['other', other],
  ['this', process.cwd()],
] as const) {
  const { loadConfig } = await import(`${dir}/src/config.ts`);
  const { createDeps } = await import(`${dir}/src/deps.ts`);
  const { OPERATIONS } = await import(`${dir}/src/operations/registry.ts`);
  const { runOperation } = await import(`${dir}/src/operations/pipeline/run.ts`);
  const { callRequestFrom, restAnswer } = await import(`${dir}/src/surfaces/rest.ts`);
  const { queryInput } = await import(`${dir}/src/http/client.ts`);
  const deps = await createDeps(loadConfig({ ...process.env, ...env }, { seedDemo: false }));
  const tree = { OPERATIONS, runOperation, callRequestFrom, restAnswer, queryInput };
  const reader = pipelineReader(tree, deps, path, headers);
  sides.push({ label, deps, ...reader, micros: [] as number[] });
}

try {
  for (let round = 0; round < rounds; round++) {
    for (const side of round % 2 ? [...sides].reverse() : sides) {
      const started = process.hrtime.bigint();
      for (let i = 0; i < READS_PER_ROUND; i++) await side.read();
      side.micros.push(Number(process.hrtime.bigint() - started) / READS_PER_ROUND / 1000);
      if (side.status() !== 200) throw new Error(`${path} answered ${side.status()}`);
    }
  }
} finally {
  for (const side of sides) await side.deps.close();
}
const [before, after] = sides.map((side) => side.micros.slice(WARM_UP_ROUNDS));
for (const [side, micros] of [
  [sides[0], before],
  [sides[1], after],
] as const)
  console.log(
    `${side.label}: median ${median(micros).toFixed(2)} µs a read (rounds: ${micros.map((m) => m.toFixed(2)).join(' ')})`,
  );
const differences = after.map((micros, round) => micros - before[round]);
console.log(
  `${path}, this − other, median of ${differences.length} paired rounds: ${median(differences).toFixed(2)} µs a read; ` +
    `this faster in ${differences.filter((d) => d < 0).length} of ${differences.length}`,
);
