// The rows bench/instructions.ts counts, timed: requests per second and server CPU a request of the
// bearer read, the anonymous events list, MCP tools/call at each revision, A2A tasks/send and the
// durable highlight write, each beside node:http and Fastify sending the same answer with no work
// (for the POST rows, whose answers no floor sends, beside the two hellos). All servers are up at
// once and the rows run in interleaved rounds, so every ratio is taken within its round, minutes
// apart at most; the median round is reported.
//
// Usage: node bench/rows-beside-floors.ts  (wrk from Debian; BENCH_FLOOR_ROUNDS, 3 by default;
// BENCH_SECONDS a row, BENCH_WARMUP_SECONDS, BENCH_CONNECTIONS as every bench). About 5 minutes.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { seedMemberReads } from './member-reads.ts';
import { FLOORS, type FloorRow, type RequestRow, serviceRows } from './request-rows.ts';
import {
  benchEnvironment,
  CONNECTIONS,
  cli,
  cpuMicros,
  median,
  mintBenchToken,
  pinLoadGenerator,
  SECONDS,
  type Server,
  startProcess,
  WARMUP_SECONDS,
} from './support.ts';
import { WRK_INSTALLED, wrk } from './wrk.ts';

if (!WRK_INSTALLED) throw new Error('wrk is not installed (docs/development.md)');
const ROUNDS = Number(process.env.BENCH_FLOOR_ROUNDS ?? 3);

pinLoadGenerator();
const { dir, env } = benchEnvironment('agent-commons-floors-');
cli(['migrate'], env);
await seedMemberReads(env.DATABASE_URL);
const reader = mintBenchToken(env, 'floors', 'read:public,membership:read').token;
const writer = mintBenchToken(env, 'floors-writer', 'events:submit_recap').token;

interface Timed {
  requestsPerSecond: number;
  cpuMicrosPerRequest: number;
}

const servers = new Map<string, Server>();
let loads = 0;

/** `seconds` of wrk on one row: its rate and the server's CPU a request. */
function timed(row: RequestRow, server: Server, seconds: number): Timed {
  let script: string | undefined;
  if (row.script) {
    script = join(dir, `load-${++loads}.lua`);
    writeFileSync(script, row.script(loads));
  }
  const before = cpuMicros(server.child.pid!);
  const output = wrk(server.url + row.url, seconds, row.headers, CONNECTIONS, script);
  if (/Non-2xx/.test(output)) throw new Error(`${row.label}: answers other than 2xx:\n${output}`);
  const answered = Number(/(\d+) requests in/.exec(output)?.[1]);
  return {
    requestsPerSecond: Math.round(Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1])),
    cpuMicrosPerRequest: Math.round((10 * (cpuMicros(server.child.pid!) - before)) / answered) / 10,
  };
}

const floors = Object.values(FLOORS);
const rows = serviceRows(reader, writer);
const serverOf = (row: RequestRow) => servers.get((row as FloorRow).server ?? 'service')!;
const rounds: Map<RequestRow, Timed>[] = [];
try {
  servers.set('hello', await startProcess(['bench/hello-server.mjs'], {}, '/'));
  servers.set('fastify', await startProcess(['bench/fastify-floor.mjs'], {}, '/setup-check'));
  servers.set('service', await startProcess(['bin/agent-commons.js', 'serve', '--no-seed'], env, '/healthz'));
  for (const row of [...floors, ...rows]) timed(row, serverOf(row), WARMUP_SECONDS);
  for (let round = 1; round <= ROUNDS; round++) {
    const figures = new Map<RequestRow, Timed>();
    for (const row of [...floors, ...rows]) figures.set(row, timed(row, serverOf(row), SECONDS));
    rounds.push(figures);
    console.log(
      `round ${round}: ${[...figures].map(([row, t]) => `${row.label} ${t.requestsPerSecond}/s ${t.cpuMicrosPerRequest} µs`).join('; ')}`,
    );
  }
} finally {
  for (const server of servers.values()) await server.stop();
  rmSync(dir, { recursive: true, force: true });
}

/** A row's share of its floor's rate, round by round, and the median round's. */
function shares(row: RequestRow, floor: FloorRow): string {
  const each = rounds.map((round) =>
    Math.round((100 * round.get(row)!.requestsPerSecond) / round.get(floor)!.requestsPerSecond),
  );
  return `${each.join(', ')} % (${median(each)} %)`;
}

const medianRate = (row: RequestRow) => median(rounds.map((round) => round.get(row)!.requestsPerSecond));
const medianCpu = (row: RequestRow) => median(rounds.map((round) => round.get(row)!.cpuMicrosPerRequest));
console.table(
  [...floors, ...rows].map((row) => ({
    row: row.label,
    'req/s (median)': medianRate(row),
    'server CPU µs a request (median)': medianCpu(row),
  })),
);
console.table(
  rows.map((row) => {
    const floor = row.floor ?? FLOORS.hello;
    const fastify = row.fastifyFloor ?? FLOORS.fastifyHello;
    return {
      row: row.label,
      [`of its node:http floor`]: `${shares(row, floor)} of ${floor.label}`,
      [`of its Fastify floor`]: `${shares(row, fastify)} of ${fastify.label}`,
    };
  }),
);
