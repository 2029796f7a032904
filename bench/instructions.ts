// Instructions a request costs, counted by valgrind's callgrind: a figure that does not move with
// the machine's speed or with what else it runs (CPU time a request here moves by two to three times
// from one machine to the next; docs/benchmarks.md). node:http's hello world (a), its
// floors with (b)'s and (f)'s answers (b'', f''), the service's bearer setup-check (b) and its
// anonymous upcoming read (f) each run under callgrind, are warmed, then counted in interleaved
// rounds. A count: the counters are zeroed, wrk loads the row for a few seconds, the counters are
// dumped, and the main thread's instructions are divided by the requests wrk saw answered. V8's
// helper threads (its optimizing compiler, parts of the collector) are left out of the figure: their
// work comes in bursts (a tier-up in one count, none in the next); their share is printed beside it.
//
// What it does not see: the kernel's work (the socket write, about half of a request's time on this
// machine) and what a cache miss or a stall costs. So the figure is the user-space work a request
// takes, not its time. Use it to tell whether a change to the request path did less work (a change
// that moves a row by more than its rounds' spread), not as the timed rows.
//
// Usage: node bench/instructions.ts  (valgrind and wrk from Debian; BENCH_INSTRUCTION_ROUNDS, 3 by
// default; BENCH_INSTRUCTION_SECONDS a count, 8 by default; BENCH_INSTRUCTION_WARM_PASSES, 20;
// BENCH_INSTRUCTION_FUNCTIONS, 25: how many functions to list where (b) and (f) differ from their
// floors; BENCH_INSTRUCTION_NAMES=1 names the JavaScript functions among them)
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { seedMemberReads } from './member-reads.ts';
import {
  benchEnvironment,
  cli,
  median,
  mintBenchToken,
  pinLoadGenerator,
  type Server,
  startProcess,
} from './support.ts';
import { WRK_INSTALLED, wrk } from './wrk.ts';

if (!WRK_INSTALLED) throw new Error('wrk is not installed (docs/development.md)');
if (spawnSync('callgrind_control', ['-h']).error) throw new Error('valgrind is not installed');
const ROUNDS = Number(process.env.BENCH_INSTRUCTION_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_INSTRUCTION_SECONDS ?? 8);
const WARM_PASSES = Number(process.env.BENCH_INSTRUCTION_WARM_PASSES ?? 20);
const FUNCTIONS = Number(process.env.BENCH_INSTRUCTION_FUNCTIONS ?? 25);
// Names for the code V8 compiles, from its perf map. Off by default: in both runs with the map, the
// service's JIT took a course native runs of the same load never show (docs/benchmarks.md).
const NAMES = process.env.BENCH_INSTRUCTION_NAMES === '1';
// Under callgrind a server answers a few hundred to a thousand requests a second: ten connections
// keep it busy.
const CONNECTIONS = 10;

pinLoadGenerator();
const { dir, env } = benchEnvironment('agent-commons-instructions-');
cli(['migrate'], env);
await seedMemberReads(env.DATABASE_URL);
const { token } = mintBenchToken(env, 'instructions', 'read:public,membership:read', false);

/**
 * A server under callgrind, one dump file a thread. V8 writes code into its heap, which valgrind must
 * check for changes (--smc-check).
 */
function underCallgrind(name: string, args: string[], serverEnv: Record<string, string>, health: string) {
  const launcher = [
    'valgrind',
    '--tool=callgrind',
    '--smc-check=all-non-file',
    '--separate-threads=yes',
    `--callgrind-out-file=${join(dir, `${name}.%p.out`)}`,
  ];
  // --perf-basic-prof: V8 writes where it put each compiled function (/tmp/perf-<pid>.map), which
  // names the code callgrind finds no symbol for. It also starts V8's log, kept in the run's folder
  // rather than the working directory.
  const logged = [
    '--perf-basic-prof',
    `--logfile=${join(dir, `${name}-v8.log`)}`,
    '--no-logfile-per-isolate',
  ];
  const node = NAMES ? [...logged, ...args] : args;
  return startProcess(node, serverEnv, health, { launcher, timeoutMs: 300_000 });
}

/**
 * callgrind_control on the server's counters. valgrind names the pipes it is reached by after the
 * HOST variable, which startProcess sets for the server: the control must see the same.
 */
function control(command: '-z' | '-d', server: Server): void {
  const run = spawnSync('callgrind_control', [command, String(server.child.pid)], {
    encoding: 'utf8',
    env: { ...process.env, HOST: '127.0.0.1' },
  });
  if (run.status !== 0 || run.stderr.includes('error'))
    throw new Error(`callgrind_control ${command} failed: ${run.stdout}${run.stderr}`);
}

/** A dump's files: <name>.<pid>.out.<n>-<thread>, thread 01 the main one. */
const DUMP_FILE = /\.out\.(\d+)-(\d+)$/;

/** The number of the server's last dump so far (0: none). */
function lastDump(name: string): number {
  const numbers = readdirSync(dir)
    .filter((file) => file.startsWith(`${name}.`))
    .map((file) => Number(DUMP_FILE.exec(file)?.[1] ?? 0));
  return Math.max(0, ...numbers);
}

/** The instructions in one dump file, once the server has written it whole. */
function instructionsIn(path: string): number | undefined {
  const text = readFileSync(path, 'utf8');
  const summary = /^summary: (\d+)/m.exec(text)?.[1];
  return summary && /^totals: /m.test(text) ? Number(summary) : undefined;
}

interface Dump {
  /** The main thread's file and instructions. */
  main: string;
  mainInstructions: number;
  /** Every other thread's instructions. */
  helperInstructions: number;
}

/** Dumps the server's counters (everything since they were zeroed) and reads them, thread by thread. */
async function dump(name: string, server: Server): Promise<Dump> {
  const number = lastDump(name) + 1;
  control('-d', server);
  // The server writes the dump after it has acknowledged the command: wait for every thread's file.
  for (let waited = 0; waited < 30_000; waited += 100) {
    const files = readdirSync(dir).filter(
      (file) => file.startsWith(`${name}.`) && Number(DUMP_FILE.exec(file)?.[1]) === number,
    );
    const counts = files.map((file) => ({ file, instructions: instructionsIn(join(dir, file)) }));
    const main = counts.find(({ file }) => file.endsWith('-01'));
    if (main?.instructions !== undefined && counts.every(({ instructions }) => instructions !== undefined))
      return {
        main: join(dir, main.file),
        mainInstructions: main.instructions,
        helperInstructions:
          counts.reduce((sum, count) => sum + (count.instructions ?? 0), 0) - main.instructions,
      };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no callgrind dump ${number} of ${name} within 30 s`);
}

interface Count {
  pid: number;
  perRequest: number;
  helpersPerRequest: number;
  answered: number;
  main: string;
}

interface Row {
  label: string;
  server: string;
  url: string;
  headers: Record<string, string>;
  counts: Count[];
}

const servers = new Map<string, Server>([
  ['hello', await underCallgrind('hello', ['bench/hello-server.mjs'], {}, '/')],
  [
    'service',
    await underCallgrind('service', ['bin/agent-commons.js', 'serve', '--no-seed'], env, '/healthz'),
  ],
]);
const bearer = { authorization: `Bearer ${token}` };
const rowOf = (label: string, server: string, url: string, headers = {}): Row => ({
  label,
  server,
  url,
  headers,
  counts: [],
});
const rows = [
  rowOf('(a) node:http hello world', 'hello', '/'),
  rowOf("(b'') node:http, (b)'s answer", 'hello', '/setup-check'),
  rowOf('(b) setup-check, bearer', 'service', '/api/agent/setup-check', bearer),
  rowOf("(f'') node:http, (f)'s answer", 'hello', '/upcoming'),
  rowOf('(f) upcoming, anonymous', 'service', '/api/events/upcoming'),
];
const [hello, setupFloor, setupCheck, upcomingFloor, upcoming] = rows;

/** One count: the row's instructions a request over SECONDS of load. */
async function count(row: Row): Promise<Count> {
  const server = servers.get(row.server)!;
  control('-z', server);
  const output = wrk(server.url + row.url, SECONDS, row.headers, CONNECTIONS);
  const { main, mainInstructions, helperInstructions } = await dump(row.server, server);
  if (/Non-2xx/.test(output)) throw new Error(`${row.label}: answers other than 2xx:\n${output}`);
  const answered = Number(/(\d+) requests in/.exec(output)?.[1]);
  return {
    pid: server.child.pid!,
    perRequest: Math.round(mainInstructions / answered),
    helpersPerRequest: Math.round(helperInstructions / answered),
    answered,
    main,
  };
}

const medianOf = (row: Row) => median(row.counts.map((count) => count.perRequest));
let functionLines: string[] = [];
try {
  // Warm: under callgrind the JIT takes minutes of wall time to reach the code a row runs warm, and
  // (b) and (f) share the service's code, so the rows are warmed in turns, as they are counted. They
  // are warm after a pass in which V8's helper threads (its compiler) did less than 5 % of the main
  // thread's work in every count and every count agreed with the row's last within 2 %
  // (WARM_PASSES at most).
  const warming = new Map(rows.map((row) => [row, [] as number[]]));
  let warm = false;
  for (let pass = 1; pass <= WARM_PASSES && !warm; pass++) {
    warm = pass > 1;
    for (const [row, counts] of warming) {
      const { perRequest, helpersPerRequest } = await count(row);
      const previous = counts.at(-1) ?? 0;
      counts.push(perRequest);
      if (Math.abs(perRequest - previous) > 0.02 * perRequest || helpersPerRequest >= 0.05 * perRequest)
        warm = false;
    }
  }
  for (const [row, counts] of warming) console.log(`warm: ${row.label} ${counts.join(', ')}`);
  if (!warm)
    console.log(`not settled after ${WARM_PASSES} passes: read the rounds' spread before their figures`);
  for (let round = 1; round <= ROUNDS; round++) {
    for (const row of rows) row.counts.push(await count(row));
    console.log(
      `round ${round}: ${rows.map((row) => `${row.label} ${row.counts.at(-1)!.perRequest}`).join('; ')}`,
    );
  }
  functionLines = [
    ...functionDifferences("(b) against (b'')", setupCheck, setupFloor),
    ...functionDifferences("(f) against (f'')", upcoming, upcomingFloor),
  ];
} finally {
  for (const server of servers.values()) {
    await server.stop();
    if (NAMES) rmSync(`/tmp/perf-${server.child.pid}.map`, { force: true });
  }
  rmSync(dir, { recursive: true, force: true });
}

/**
 * Where a row's instructions a request differ from its floor's, function by function (self cost, the
 * main thread, the last round's counts). Code V8 compiled at run time has no symbol: it is one entry.
 */
function functionDifferences(title: string, row: Row, floor: Row): string[] {
  const [rowCosts, floorCosts] = [row, floor].map(({ counts }) => functionCosts(counts.at(-1)!));
  const names = new Set([...rowCosts.keys(), ...floorCosts.keys()]);
  const differences = [...names]
    .map((name) => ({ name, row: rowCosts.get(name) ?? 0, floor: floorCosts.get(name) ?? 0 }))
    .sort((x, y) => Math.abs(y.row - y.floor) - Math.abs(x.row - x.floor))
    .slice(0, FUNCTIONS);
  return [
    `${title}, instructions a request by function (row, floor, difference):`,
    ...differences.map(
      ({ name, row, floor }) =>
        `  ${Math.round(row)}  ${Math.round(floor)}  ${Math.round(row - floor)}  ${name}`,
    ),
  ];
}

/** A count's self cost by function, a request's share of it, from callgrind_annotate. */
function functionCosts(count: Count): Map<string, number> {
  const run = spawnSync('callgrind_annotate', ['--inclusive=no', '--threshold=100', count.main], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const compiled = compiledFunctions(count.pid);
  const costs = new Map<string, number>();
  // "  21,120,024 ( 2.55%)  ???:Builtins_StringAdd_CheckNone [/path/to/node]"
  for (const line of run.stdout.split('\n')) {
    const match = /^\s*([\d,]+) \(\s*[\d.]+%\)\s+[^:]*:(.+) \[(.+)\]$/.exec(line);
    if (!match) continue;
    const [, instructions, fn, object] = match;
    const name = object === '???' ? compiled(fn) : fn.length > 90 ? `${fn.slice(0, 90)}…` : fn;
    costs.set(name, (costs.get(name) ?? 0) + Number(instructions.replaceAll(',', '')) / count.answered);
  }
  // The wrappers below main are listed with the whole thread's cost as their own: none is a cost.
  for (const [name, cost] of costs) if (cost >= 0.99 * count.perRequest) costs.delete(name);
  return costs;
}

/**
 * The JavaScript function V8 compiled at an address, from the server's perf map ("start size name",
 * hexadecimal): callgrind names such code by the address it entered it at.
 */
function compiledFunctions(pid: number): (address: string) => string {
  let entries: { start: number; end: number; name: string }[] = [];
  if (NAMES)
    try {
      entries = readFileSync(`/tmp/perf-${pid}.map`, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => {
          const [start, size, ...name] = line.split(' ');
          const from = Number.parseInt(start, 16);
          return { start: from, end: from + Number.parseInt(size, 16), name: name.join(' ') };
        });
    } catch {
      // No map: such code stays one entry.
    }
  return (address) => {
    const at = Number.parseInt(address, 16);
    // The latest entry wins: V8 reuses the space of code it dropped.
    for (let index = entries.length - 1; index >= 0; index--)
      if (entries[index].start <= at && at < entries[index].end) return `JS ${entries[index].name}`;
    return NAMES ? 'code V8 compiled at run time (not in its map)' : 'code V8 compiled at run time';
  };
}

console.log(
  'instructions a request, main thread (median of the rounds; every round; helper threads beside):',
);
for (const row of rows)
  console.log(
    `  ${row.label}: ${medianOf(row)} (${row.counts.map((count) => count.perRequest).join(', ')}; helpers ` +
      `${row.counts.map((count) => count.helpersPerRequest).join(', ')})`,
  );
// As the timed rows read: the requests one row answers for the work of one of the other's.
const share = (row: Row, of: Row) => `${Math.round((100 * medianOf(of)) / medianOf(row))} %`;
console.log(
  `(b) of (a) ${share(setupCheck, hello)}, of (b'') ${share(setupCheck, setupFloor)}; (f) of (f'') ` +
    `${share(upcoming, upcomingFloor)}; (b'') of (a) ${share(setupFloor, hello)}. The service's own ` +
    `instructions above the floor: (b) ${medianOf(setupCheck) - medianOf(setupFloor)}, (f) ` +
    `${medianOf(upcoming) - medianOf(upcomingFloor)}.`,
);
for (const line of functionLines) console.log(line);
