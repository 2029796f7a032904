// One instance on PostgreSQL, one token, the way a single agent loads it: `setup-check` (a bearer
// read: the token lookup and the per-minute counter) or real highlight writes, with the server's
// user and system CPU per request. For A/B runs of a PostgreSQL change (docs/benchmarks.md):
// run it on each version, alternating.
// Usage: node bench/postgres-instance.ts [read|write]   (BENCH_POSTGRES_URL, BENCH_CONNECTIONS,
// REDIS_URL to count the per-minute windows in Redis instead of the database)
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import { cpuTimes, mintBenchToken, startProcess, withBenchPostgres } from './support.ts';

const kind = process.argv[2] === 'write' ? 'write' : 'read';
const connections = Number(process.env.BENCH_CONNECTIONS ?? 25);

const redis: Record<string, string> = process.env.REDIS_URL
  ? { REDIS_URL: process.env.REDIS_URL, REDIS_KEY_PREFIX: `ac_bench_${randomBytes(4).toString('hex')}` }
  : {};
await withBenchPostgres(async (env) => {
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
    const before = cpuTimes(server.child.pid!);
    const result = await load(8);
    const after = cpuTimes(server.child.pid!);
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
}, redis);
