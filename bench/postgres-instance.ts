// One instance on PostgreSQL, one token, the way a single agent loads it: `setup-check` (a bearer
// read: the token lookup and the per-minute counter) or real highlight writes, with the server's
// user and system CPU per request. For A/B runs of a PostgreSQL change (docs/benchmarks.md):
// run it on each version, alternating.
// Usage: node bench/postgres-instance.ts [read|write]   (BENCH_POSTGRES_URL, BENCH_CONNECTIONS,
// REDIS_URL to count the per-minute windows in Redis instead of the database)
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import pg from 'pg';
import { cli, mintBenchToken, startProcess } from './support.ts';

const ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const kind = process.argv[2] === 'write' ? 'write' : 'read';
const connections = Number(process.env.BENCH_CONNECTIONS ?? 25);

/** User and system CPU of a process so far, in µs (from /proc: clock ticks of 10 ms). */
function cpu(pid: number): { user: number; system: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return { user: Number(fields[11]) * 10_000, system: Number(fields[12]) * 10_000 };
}

const admin = new pg.Client({ connectionString: ADMIN_URL });
await admin.connect();
const name = `ac_bench_${randomBytes(4).toString('hex')}`;
await admin.query(`CREATE DATABASE ${name}`);
const url = new URL(ADMIN_URL);
url.pathname = `/${name}`;
const env: Record<string, string> = {
  DATABASE_URL: url.toString(),
  SEED_DEMO: 'false',
  LOG_LEVEL: 'warn',
  LIMIT_TOKEN_PER_MINUTE: '100000000',
  LIMIT_HIGHLIGHTS_PER_DAY: '100000000',
  ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL, REDIS_KEY_PREFIX: name } : {}),
};
try {
  cli(['migrate'], env);
  const scopes = kind === 'write' ? 'events:submit_recap' : 'read:public';
  const { token } = mintBenchToken(env, 'pg-instance', scopes, false);
  const server = await startProcess(['bin/agent-commons.js', 'serve', '--no-seed'], env, '/healthz');
  let sequence = 0;
  const load = (duration: number) =>
    autocannon({
      url: `${server.url}${kind === 'write' ? '/api/ingest/highlights/pending' : '/api/agent/setup-check'}`,
      method: kind === 'write' ? 'POST' : 'GET',
      connections,
      duration,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      requests:
        kind === 'write'
          ? [
              {
                setupRequest: (request) => ({
                  ...request,
                  body: JSON.stringify({
                    id: `pg-one-${++sequence}`,
                    event_title: 'Bench night',
                    dek: 'A short recap of the night.',
                    date: '2026-07-16',
                  }),
                }),
              },
            ]
          : undefined,
    });
  try {
    await load(2);
    const before = cpu(server.child.pid!);
    const result = await load(8);
    const after = cpu(server.child.pid!);
    const total = result.requests.total;
    console.log(
      `${kind} on PostgreSQL, one instance, one token, ${connections} connections` +
        `${env.REDIS_URL ? ', per-minute windows in Redis' : ''}: ${Math.round(result.requests.average)} req/s, ` +
        `p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, non-2xx ${result.non2xx}; server CPU ` +
        `${Math.round((after.user - before.user) / total)} µs user + ${Math.round((after.system - before.system) / total)} µs system per request`,
    );
  } finally {
    await server.stop();
  }
} finally {
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}
