// Durable highlight writes on PostgreSQL, two instances on one database, each loaded by its own
// autocannon at the same time (half the connections each). Every write is acknowledged only after
// its COMMIT; after the load the stored rows are counted against the 2xx answers, so a write the
// service acknowledged and lost, or stored twice, shows. BENCH_POSTGRES_URL (default the local test
// server) names a server where a fresh database can be created and is dropped afterwards.
// BENCH_PG_MEMBERS (default 25, as docs/benchmarks.md's figures are taken): how many members' tokens the
// writes take turns with. One member's writes all take its daily highlight quota, one row: each
// waits for the previous one's commit.
import { readdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import autocannon from 'autocannon';
import pg from 'pg';
import {
  CONNECTIONS,
  cpuMicros,
  type Figures,
  highlightStory,
  machineTicks,
  mintBenchToken,
  SECONDS,
  startProcess,
  stolenShare,
  WARMUP_SECONDS,
  withBenchPostgres,
} from './support.ts';

export const MEMBERS = Math.max(1, Number(process.env.BENCH_PG_MEMBERS ?? 25));
/**
 * BENCH_PG_REDIS=redis://… (or 1 for the local server): the per-minute counters in Redis, as a
 * deployment of several instances may keep them (docs/deployment.md), instead of PostgreSQL's table.
 */
const REDIS = process.env.BENCH_PG_REDIS === '1' ? 'redis://127.0.0.1:6379' : process.env.BENCH_PG_REDIS;

export interface PostgresWrites {
  instances: Figures[];
  total: number;
  acknowledged: number;
  stored: number;
  /** The PostgreSQL server's CPU per stored write over the measured window, when it runs here. */
  postgresCpuPerWrite?: number;
  /** This process's CPU (both autocannons) per acknowledged write over the measured window. */
  loadCpuPerWrite: number;
  /** The share of the machine's CPU time the hypervisor took over the window (steal). */
  stolen: number;
}

/**
 * User and system CPU of this machine's PostgreSQL processes so far, in µs (from /proc), or
 * undefined when none is visible (a server elsewhere). Backends that exit take theirs with them; the
 * instances' pooled connections live through the window.
 */
function localPostgresCpuMicros(): number | undefined {
  const pids = readdirSync('/proc').filter((entry) => {
    if (!/^\d+$/.test(entry)) return false;
    try {
      return readFileSync(`/proc/${entry}/stat`, 'utf8').includes(' (postgres) ');
    } catch {
      return false;
    }
  });
  if (pids.length === 0) return undefined;
  let micros = 0;
  for (const pid of pids) {
    try {
      micros += cpuMicros(Number(pid));
    } catch {
      // A backend that exited in between takes its CPU with it, as the comment above says.
    }
  }
  return micros;
}

export function postgresWrites(): Promise<PostgresWrites> {
  const redis: Record<string, string> = REDIS
    ? { REDIS_URL: REDIS, REDIS_KEY_PREFIX: `bench-${process.pid}` }
    : {};
  return withBenchPostgres(async (env) => {
    const tokens = Array.from(
      { length: MEMBERS },
      (_, i) => mintBenchToken(env, `pg-writes-${i}`, 'events:submit_recap', false).token,
    );
    const servers = await Promise.all(
      [0, 1].map(() => startProcess(['bin/agent-commons.js', 'serve', '--no-seed'], env, '/healthz')),
    );
    let sequence = 0;
    const options = (serverUrl: string, duration: number): autocannon.Options => ({
      url: `${serverUrl}/api/ingest/highlights/pending`,
      method: 'POST',
      connections: Math.max(1, Math.floor(CONNECTIONS / 2)),
      duration,
      headers: { 'content-type': 'application/json' },
      requests: [
        {
          setupRequest: (request) => ({
            ...request,
            headers: { ...request.headers, authorization: `Bearer ${tokens[++sequence % tokens.length]}` },
            body: highlightStory(`pg-${process.pid}-${sequence}`),
          }),
        },
      ],
    });
    const client = new pg.Client({ connectionString: env.DATABASE_URL });
    await client.connect();
    const storedRows = async () =>
      Number((await client.query('select count(*) as n from highlights')).rows[0].n);
    // autocannon stops without waiting for the answers still due: those writes commit afterwards.
    // Counting once the count stops moving keeps the warm-up's tail out of the measured window.
    const settledRows = async () => {
      let last = await storedRows();
      for (;;) {
        await new Promise((resolve) => setTimeout(resolve, 300));
        const now = await storedRows();
        if (now === last) return now;
        last = now;
      }
    };
    try {
      if (WARMUP_SECONDS > 0)
        await Promise.all(servers.map((s) => autocannon(options(s.url, WARMUP_SECONDS))));
      const storedBefore = await settledRows();
      const cpuBefore = servers.map((s) => cpuMicros(s.child.pid!));
      const postgresBefore = localPostgresCpuMicros();
      const loadBefore = process.cpuUsage();
      const ticksBefore = machineTicks();
      const results = await Promise.all(servers.map((s) => autocannon(options(s.url, SECONDS))));
      const postgresAfter = localPostgresCpuMicros();
      const load = process.cpuUsage(loadBefore);
      const stolen = stolenShare(ticksBefore);
      const instances = results.map((result, i) => ({
        name: `durable highlight write, PostgreSQL, instance ${i + 1} of 2`,
        requestsPerSecond: Math.round(result.requests.average),
        p50: result.latency.p50,
        p99: result.latency.p99,
        non2xx: result.non2xx,
        errors: result.errors,
        cpuPerRequest: Math.round((cpuMicros(servers[i].child.pid!) - cpuBefore[i]) / result.requests.total),
      }));
      const acknowledged = results.reduce((sum, r) => sum + r['2xx'], 0);
      return {
        instances,
        total: instances.reduce((sum, row) => sum + row.requestsPerSecond, 0),
        acknowledged,
        stored: (await settledRows()) - storedBefore,
        postgresCpuPerWrite:
          postgresBefore === undefined || postgresAfter === undefined || acknowledged === 0
            ? undefined
            : Math.round((postgresAfter - postgresBefore) / acknowledged),
        loadCpuPerWrite: Math.round((load.user + load.system) / Math.max(1, acknowledged)),
        stolen,
      };
    } finally {
      await client.end();
      await Promise.all(servers.map((s) => s.stop()));
    }
  }, redis);
}

export function postgresWritesSummary(writes: PostgresWrites): string {
  // A write still in flight when the load generator stops is stored but never counted as answered:
  // at most one per connection. A stored count below the acknowledged one would be a lost write.
  const inFlight = writes.stored - writes.acknowledged;
  const verdict =
    inFlight < 0
      ? `LOST: ${-inFlight} acknowledged writes are not stored`
      : inFlight <= CONNECTIONS
        ? `every acknowledged write is stored; ${inFlight} more were in flight when the load stopped`
        : `MISMATCH: ${inFlight} more stored than acknowledged, beyond the ${CONNECTIONS} that can be in flight`;
  const postgresCpu =
    writes.postgresCpuPerWrite === undefined
      ? ''
      : `; PostgreSQL's own CPU ${writes.postgresCpuPerWrite} µs per write (its processes on this machine)`;
  return (
    `durable highlight writes, two instances on one PostgreSQL database${REDIS ? ', per-minute counters in Redis' : ''}: ` +
    `${writes.total} writes/s together (target >= 3000); ` +
    `${writes.acknowledged} acknowledged, ${writes.stored} stored: ${verdict}${postgresCpu}` +
    machineCeiling(writes)
  );
}

/**
 * What this machine's cores allow at the CPU each write cost in the run: the instances, PostgreSQL
 * and the load generator all run here, so no code change can lift the writes above the cores' seconds
 * divided by that sum. Only the instances' share is the service's to lower.
 */
function machineCeiling(writes: PostgresWrites): string {
  if (writes.postgresCpuPerWrite === undefined) return '';
  // The instances' CPU per write, each weighted by the writes it answered (their sum is `total`).
  const instanceCpu = Math.round(
    writes.instances.reduce((sum, row) => sum + (row.cpuPerRequest ?? 0) * row.requestsPerSecond, 0) /
      Math.max(1, writes.total),
  );
  const perWrite = instanceCpu + writes.postgresCpuPerWrite + writes.loadCpuPerWrite;
  // All of the machine's cores (the bench pins itself to one: availableParallelism would say 1).
  const cores = cpus().length;
  return (
    `\ndurable highlight write, PostgreSQL: CPU per write: instance ${instanceCpu} µs + PostgreSQL ${writes.postgresCpuPerWrite} µs + ` +
    `load generator ${writes.loadCpuPerWrite} µs = ${perWrite} µs: this machine's ${cores} cores allow at ` +
    `most ${Math.round((cores * 1_000_000) / perWrite)} writes/s at those costs; the hypervisor took ` +
    `${Math.round(writes.stolen * 100)} % of the cores' time (steal)`
  );
}
