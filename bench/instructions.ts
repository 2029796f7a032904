// Instructions a request costs, counted by valgrind's callgrind: a figure that does not move with
// the machine's speed or with what else it runs (CPU time a request here moves by two to three times
// from one machine to the next; docs/benchmarks.md). The rows: node:http's hello world; node:http
// sending the bearer read's and the events list's answers as kept bytes (their floors); Fastify
// sending the same (bench/fastify-floor.mjs: what lies above it is the service's own); the service's
// bearer read (setup-check), its anonymous events list, the same list as an MCP tools/call (at
// revision 2025-11-25 and at 2026-07-28) and as an A2A tasks/send, and a durable highlight write on SQLite. Each server runs under callgrind, is
// warmed, then counted in interleaved rounds. A count: the counters are zeroed, wrk loads the row for
// a few seconds, the counters are dumped, and the main thread's instructions are divided by the
// requests wrk saw answered. V8's helper threads (its optimizing compiler, parts of the collector)
// are left out of the figure: their work comes in bursts (a tier-up in one count, none in the next);
// their share is printed beside it.
//
// BENCH_BASELINE=<git revision> counts that revision's service beside this tree's in the same
// interleaved rounds: it is checked out with `git worktree add` into the run's temporary folder (this
// tree's node_modules linked in), served from a copy of the same database, and each service row is
// counted on both; the function lists then show, row by row, where this tree's instructions differ
// from the revision's.
//
// What it does not see: the kernel's work (the socket write, about half of a request's time on this
// machine) and what a cache miss or a stall costs. So the figure is the user-space work a request
// takes, not its time. Use it to tell whether a change to the request path did less work (a change
// that moves a row by more than its rounds' spread), not as the timed rows.
//
// Usage: node bench/instructions.ts  (valgrind and wrk from Debian; BENCH_INSTRUCTION_ROUNDS, 3 by
// default; BENCH_INSTRUCTION_SECONDS a count, 8 by default; BENCH_INSTRUCTION_WARM_PASSES, 20;
// BENCH_INSTRUCTION_FUNCTIONS, 25: how many functions to list where a row differs from its floor or
// its baseline; BENCH_INSTRUCTION_NAMES=1 names the JavaScript functions among them; BENCH_BASELINE,
// a revision to count beside this tree; BENCH_INSTRUCTION_MATCH, a regular expression the service
// rows counted must match (all by default); BENCH_INSTRUCTION_ROWS=signed, the signed-request rows
// instead; BENCH_INSTRUCTION_KEEP=1 keeps the dumps). A run takes 12 to 15 minutes, about twice
// that with a baseline; BENCH_INSTRUCTION_ROUNDS=2 shortens it.
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { seedMemberReads } from './member-reads.ts';
import { FLOORS, type FloorRow, lua, type RequestRow, serviceRows } from './request-rows.ts';
import {
  FLOOR_HEADER,
  prepareSignedTokens,
  SIGNED_FLOOR_SERVE,
  signedHeaders,
  signedSetupCheckUrl,
} from './signed-requests.ts';
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
const BASELINE = process.env.BENCH_BASELINE;
// How long a server may take to listen under callgrind: minutes on a loaded machine.
const START_TIMEOUT_MS = 1000 * Number(process.env.BENCH_INSTRUCTION_START_SECONDS ?? 900);
// BENCH_INSTRUCTION_ROWS=signed counts the signed request instead: the bearer read, its floor (the
// same plus one bare Ed25519 verification, bench/signed-floor.mjs loaded into the service), and the
// signed request with a nonce and with none, on one service.
const SIGNED_ONLY = process.env.BENCH_INSTRUCTION_ROWS === 'signed';
if (SIGNED_ONLY && BASELINE) throw new Error('BENCH_INSTRUCTION_ROWS=signed counts no baseline');
/** Signed requests made for one count: more than a count under callgrind answers, so no nonce repeats. */
const SIGNED_PER_COUNT = Number(process.env.BENCH_INSTRUCTION_SIGNED_REQUESTS ?? 20_000);
// Names for the code V8 compiles, from its perf map. Off by default: in both runs with the map, the
// service's JIT took a course native runs of the same load never show (docs/benchmarks.md).
const NAMES = process.env.BENCH_INSTRUCTION_NAMES === '1';
/** Literal keys a request in V8's runtime past which a server's process is in the tick state. */
const TICK_STATE_KEYS = 10;
/** How many times a server in the tick state is started again before its counts are taken as they are. */
const RESTARTS = Number(process.env.BENCH_INSTRUCTION_RESTARTS ?? 3);
// Under callgrind a server answers a few hundred to a thousand requests a second: ten connections
// keep it busy.
const CONNECTIONS = 10;

pinLoadGenerator();
const { dir, env } = benchEnvironment('agent-commons-instructions-');
cli(['migrate'], env);
await seedMemberReads(env.DATABASE_URL);
const { token } = mintBenchToken(env, 'instructions', 'read:public,membership:read', false);
const { token: writerToken } = mintBenchToken(env, 'instructions-writer', 'events:submit_recap', false);
const signedTokens = SIGNED_ONLY ? await prepareSignedTokens(env) : undefined;

/**
 * The revision BENCH_BASELINE names, checked out beside this tree, on a database of its own that its
 * own CLI migrated (this tree's may hold migrations it does not know), seeded alike, with its own
 * tokens for the same rows.
 */
async function checkOutBaseline(revision: string) {
  const tree = join(dir, 'baseline-tree');
  execFileSync('git', ['worktree', 'add', '--detach', tree, revision], { stdio: 'ignore' });
  symlinkSync(resolve('node_modules'), join(tree, 'node_modules'));
  const baselineEnv = { ...env, DATABASE_URL: `sqlite:${join(dir, 'baseline.db')}` };
  const here = process.cwd();
  process.chdir(tree);
  try {
    cli(['migrate'], baselineEnv);
    await seedMemberReads(baselineEnv.DATABASE_URL);
    const reader = mintBenchToken(baselineEnv, 'instructions', 'read:public,membership:read', false).token;
    const writer = mintBenchToken(baselineEnv, 'instructions-writer', 'events:submit_recap', false).token;
    return { tree, env: baselineEnv, rows: serviceRows(reader, writer) };
  } finally {
    process.chdir(here);
  }
}
const baseline = BASELINE ? await checkOutBaseline(BASELINE) : undefined;

/**
 * BENCH_INSTRUCTION_MAIN_THREAD_COMPILE=1 runs every server with `--no-concurrent-recompilation`.
 * V8 optimizes on helper threads and installs the code whenever the main thread next looks;
 * valgrind runs one thread at a time, so what a process has compiled when moves with the
 * scheduling. Optimizing on the main thread makes a bare loop repeat exactly, but a process still
 * optimizing while it is counted then has the compiler's work in its main thread's count (the
 * service's rows spread more, docs/benchmarks.md), so V8's default is kept unless asked.
 */
const COMPILE_FLAGS =
  process.env.BENCH_INSTRUCTION_MAIN_THREAD_COMPILE === '1' ? ['--no-concurrent-recompilation'] : [];

/**
 * A server under callgrind, one dump file a thread. V8 writes code into its heap, which valgrind must
 * check for changes (--smc-check). `cwd`: the tree it is served from (this one by default).
 */
async function underCallgrind(
  name: string,
  args: string[],
  serverEnv: Record<string, string>,
  health: string,
  cwd?: string,
) {
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
  const node = [...COMPILE_FLAGS, ...(NAMES ? logged : []), ...args];
  const here = process.cwd();
  // The server is spawned in the tree it serves, so what it reads by relative path is that tree's.
  if (cwd) process.chdir(cwd);
  try {
    return await startProcess(node, serverEnv, health, { launcher, timeoutMs: START_TIMEOUT_MS });
  } finally {
    process.chdir(here);
  }
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
  /** Object-literal keys V8 defined in its runtime, a request (see literalKeysInRuntime). */
  runtimeLiteralKeys: number;
  helpersPerRequest: number;
  answered: number;
  main: string;
}

interface Row {
  label: string;
  server: 'hello' | 'fastify' | 'service' | 'baseline';
  url: string;
  headers: Record<string, string>;
  /** A POST's Lua script for wrk, made afresh for each count (its number makes its ids unique). */
  script?: (count: number) => string;
  /** The node:http row sending this row's answer: the function list shows where they differ. */
  floor?: Row;
  /** The Fastify row sending this row's answer (bench/fastify-floor.mjs): what is above it is ours. */
  fastifyFloor?: Row;
  /** This tree's row that this one counts on the baseline revision. */
  counterpart?: Row;
  counts: Count[];
}

const servers = new Map<string, Server>();

const bearer = { authorization: `Bearer ${token}` };
const rowOf = (
  label: string,
  server: Row['server'],
  url: string,
  headers: Record<string, string> = {},
  extra: Partial<Row> = {},
): Row => ({ label, server, url, headers, counts: [], ...extra });
/** A declared request (bench/request-rows.ts) as a row of counts. */
const counted = (row: FloorRow | RequestRow, server: Row['server'], extra: Partial<Row> = {}): Row =>
  rowOf(row.label, server, row.url, row.headers, { script: row.script, ...extra });

const hello = counted(FLOORS.hello, 'hello');
const bearerFloor = counted(FLOORS.bearer, 'hello');
const eventsFloor = counted(FLOORS.events, 'hello');
const bearerFastifyFloor = counted(FLOORS.fastifyBearer, 'fastify');
const eventsFastifyFloor = counted(FLOORS.fastifyEvents, 'fastify');
const floorRows = new Map<FloorRow, Row>([
  [FLOORS.bearer, bearerFloor],
  [FLOORS.events, eventsFloor],
  [FLOORS.fastifyBearer, bearerFastifyFloor],
  [FLOORS.fastifyEvents, eventsFastifyFloor],
]);
// BENCH_INSTRUCTION_MATCH=<regular expression>: only the service rows whose label it matches.
const MATCH = new RegExp(process.env.BENCH_INSTRUCTION_MATCH ?? '');
const serviceCountRows = serviceRows(token, writerToken).map((row) =>
  counted(row, 'service', {
    floor: row.floor && floorRows.get(row.floor),
    fastifyFloor: row.fastifyFloor && floorRows.get(row.fastifyFloor),
  }),
);
/**
 * wrk's Lua for signed reads, each signed afresh before the count (a fresh created; with a nonce, a
 * nonce of its own, so none is refused as a replay). `signedUrl` is the URL as the service names
 * itself, known once the service is up.
 */
let signedUrl = '';
const signedReads = (nonce: boolean) => (): string => {
  const tokens = signedTokens!;
  const sets = nonce ? SIGNED_PER_COUNT : 1;
  const entries: string[] = [];
  for (let index = 0; index < sets; index++) {
    const headers = signedHeaders(signedUrl, tokens, nonce);
    entries.push(
      `{${lua(headers.authorization)},${lua(headers['signature-input'])},${lua(headers.signature)}}`,
    );
  }
  return [
    `local signed = {${entries.join(',\n')}}`,
    'local n = 0',
    'request = function()',
    '  n = n % #signed + 1',
    '  local s = signed[n]',
    '  return wrk.format(nil, nil, { ["Authorization"] = s[1], ["Signature-Input"] = s[2], ["Signature"] = s[3] })',
    'end',
  ].join('\n');
};
const signedFloor = rowOf(
  'signed request floor: bearer read plus one bare Ed25519 verify',
  'service',
  '/api/agent/setup-check',
  {
    ...bearer,
    [FLOOR_HEADER]: '1',
  },
);
const signedRows = [
  rowOf('bearer read (setup-check)', 'service', '/api/agent/setup-check', bearer),
  signedFloor,
  rowOf(
    'signed request (Ed25519, nonce)',
    'service',
    '/api/agent/setup-check',
    {},
    {
      script: signedReads(true),
      floor: signedFloor,
    },
  ),
  rowOf(
    'signed request, no nonce (nothing stored)',
    'service',
    '/api/agent/setup-check',
    {},
    {
      script: signedReads(false),
      floor: signedFloor,
    },
  ),
];
const baselineRows = baseline
  ? serviceCountRows.map((row, index) =>
      counted(baseline.rows[index], 'baseline', { label: `${row.label} at ${BASELINE}`, counterpart: row }),
    )
  : [];
const countedServiceRows = serviceCountRows.filter((row) => MATCH.test(row.label));
// Each service row beside its baseline, so the two are counted minutes apart at most.
let rows = SIGNED_ONLY
  ? signedRows
  : [
      hello,
      bearerFloor,
      eventsFloor,
      bearerFastifyFloor,
      eventsFastifyFloor,
      ...countedServiceRows.flatMap((row) => [
        row,
        ...baselineRows.filter((other) => other.counterpart === row),
      ]),
    ];
let countsMade = 0;

/** One count: the row's instructions a request over SECONDS of load. */
async function count(row: Row): Promise<Count> {
  const server = servers.get(row.server)!;
  let script: string | undefined;
  if (row.script) {
    script = join(dir, `count-${++countsMade}.lua`);
    writeFileSync(script, row.script(countsMade));
  }
  control('-z', server);
  const output = wrk(server.url + row.url, SECONDS, row.headers, CONNECTIONS, script);
  const { main, mainInstructions, helperInstructions } = await dump(row.server, server);
  if (/Non-2xx/.test(output)) throw new Error(`${row.label}: answers other than 2xx:\n${output}`);
  const answered = Number(/(\d+) requests in/.exec(output)?.[1]);
  return {
    pid: server.child.pid!,
    perRequest: Math.round(mainInstructions / answered),
    runtimeLiteralKeys: Math.round((10 * literalKeysInRuntime(main)) / answered) / 10,
    helpersPerRequest: Math.round(helperInstructions / answered),
    answered,
    main,
  };
}

/**
 * Whether the server answers the row with a 2xx: a few seconds of it on one connection, again until
 * it has answered at all (a server cold under callgrind takes seconds over its first requests).
 */
function answers2xx(row: Row): boolean {
  const server = servers.get(row.server)!;
  for (let attempt = 1; attempt <= 10; attempt++) {
    let script: string | undefined;
    if (row.script) {
      script = join(dir, `probe-${++countsMade}.lua`);
      writeFileSync(script, row.script(countsMade));
    }
    const output = wrk(server.url + row.url, 4, row.headers, 1, script);
    if (Number(/(\d+) requests in/.exec(output)?.[1] ?? 0) > 0) return !/Non-2xx/.test(output);
  }
  throw new Error(`${row.label}: no answer in 40 s`);
}

const medianOf = (row: Row) => median(row.counts.map((count) => count.perRequest));
const functionLines: string[] = [];
try {
  // How each server is started, so one that settles in the other V8 state can be started again.
  const launches = new Map<Row['server'], () => Promise<Server>>();
  if (!SIGNED_ONLY) {
    launches.set('hello', () => underCallgrind('hello', ['bench/hello-server.mjs'], {}, '/'));
    launches.set('fastify', () => underCallgrind('fastify', ['bench/fastify-floor.mjs'], {}, '/setup-check'));
  }
  launches.set('service', () =>
    underCallgrind(
      'service',
      SIGNED_ONLY ? SIGNED_FLOOR_SERVE : ['bin/agent-commons.js', 'serve', '--no-seed'],
      env,
      '/healthz',
    ),
  );
  if (baseline)
    launches.set('baseline', () =>
      underCallgrind(
        'baseline',
        [join(baseline.tree, 'bin/agent-commons.js'), 'serve', '--no-seed'],
        baseline.env,
        '/healthz',
        baseline.tree,
      ),
    );
  for (const [name, launch] of launches) servers.set(name, await launch());
  if (SIGNED_ONLY) signedUrl = await signedSetupCheckUrl(servers.get('service')!.url);
  // A row the baseline does not serve (an MCP revision it predates, say) is counted on this tree only.
  if (baseline)
    for (const row of baselineRows) {
      if (!rows.includes(row)) continue;
      if (answers2xx(row)) continue;
      console.log(
        `${row.label}: not served by ${BASELINE} (answers other than 2xx); counted on this tree only`,
      );
      rows = rows.filter((other) => other !== row);
      row.counterpart = undefined;
    }
  // Warm: under callgrind the JIT takes minutes of wall time to reach the code a row runs warm, and
  // the service's rows share its code, so the rows are warmed in turns, as they are counted. They
  // are warm after a pass in which V8's helper threads (its compiler) did less than 5 % of the main
  // thread's work in every count and every count agreed with the row's last within 2 %
  // (WARM_PASSES at most).
  async function warmUp(warming: Row[]): Promise<Map<Row, Count[]>> {
    const counts = new Map(warming.map((row) => [row, [] as Count[]]));
    let warm = false;
    for (let pass = 1; pass <= WARM_PASSES && !warm; pass++) {
      warm = pass > 1;
      for (const [row, made] of counts) {
        const latest = await count(row);
        const previous = made.at(-1)?.perRequest ?? 0;
        made.push(latest);
        if (
          Math.abs(latest.perRequest - previous) > 0.02 * latest.perRequest ||
          latest.helpersPerRequest >= 0.05 * latest.perRequest
        )
          warm = false;
      }
    }
    for (const [row, made] of counts)
      console.log(
        `warm: ${row.label} ${made.map((c) => c.perRequest).join(', ')} (literal keys in V8's runtime ${made.at(-1)?.runtimeLiteralKeys})`,
      );
    if (!warm)
      console.log(`not settled after ${WARM_PASSES} passes: read the rounds' spread before their figures`);
    return counts;
  }
  // A server whose every row defines TICK_STATE_KEYS or more object-literal keys a request in V8's
  // runtime settled with node's nextTick building its tick objects key by key (see
  // literalKeysInRuntime); the same code in another process may not. Where the servers counted side
  // by side disagree, those in that state are started again (up to RESTARTS times), so that only
  // processes in one state are compared.
  let warmed = await warmUp(rows);
  for (let restart = 1; restart <= RESTARTS; restart++) {
    const ticking = [...launches.keys()].filter((name) => {
      const own = [...warmed].filter(([row]) => row.server === name);
      return (
        own.length > 0 && own.every(([, made]) => (made.at(-1)?.runtimeLiteralKeys ?? 0) >= TICK_STATE_KEYS)
      );
    });
    if (ticking.length === 0 || ticking.length === launches.size) break;
    for (const name of ticking) {
      console.log(
        `${name}: settled with node's tick objects built in V8's runtime; started again (${restart} of ${RESTARTS})`,
      );
      await servers.get(name)!.stop();
      servers.set(name, await launches.get(name)!());
    }
    warmed = new Map([...warmed, ...(await warmUp(rows.filter((row) => ticking.includes(row.server))))]);
  }
  if ([...warmed].some(([, made]) => (made.at(-1)?.runtimeLiteralKeys ?? 0) >= TICK_STATE_KEYS))
    console.log(
      "some rows count node's tick objects built in V8's runtime: compare only rows whose keys agree",
    );
  for (let round = 1; round <= ROUNDS; round++) {
    for (const row of rows) row.counts.push(await count(row));
    console.log(
      `round ${round}: ${rows.map((row) => `${row.label} ${row.counts.at(-1)!.perRequest}`).join('; ')}`,
    );
  }
  for (const row of rows) {
    if (row.floor)
      functionLines.push(...functionDifferences(`${row.label} against ${row.floor.label}`, row, row.floor));
    if (row.fastifyFloor)
      functionLines.push(
        ...functionDifferences(`${row.label} against ${row.fastifyFloor.label}`, row, row.fastifyFloor),
      );
    if (row.counterpart)
      functionLines.push(
        ...functionDifferences(`${row.counterpart.label} against ${BASELINE}`, row.counterpart, row),
      );
  }
} finally {
  for (const server of servers.values()) {
    await server.stop();
    if (NAMES) rmSync(`/tmp/perf-${server.child.pid}.map`, { force: true });
  }
  if (baseline) execFileSync('git', ['worktree', 'remove', '--force', baseline.tree], { stdio: 'ignore' });
  // BENCH_INSTRUCTION_KEEP=1 keeps the run's folder, its callgrind dumps among it, for
  // `callgrind_annotate --tree=caller` on a function the lists below name.
  if (process.env.BENCH_INSTRUCTION_KEEP === '1') console.log(`the run's folder is kept: ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}

/**
 * Where a row's instructions a request differ from its floor's, function by function (self cost, the
 * main thread, the last round's counts). Code V8 compiled at run time has no symbol: it is one entry.
 */
function functionDifferences(title: string, row: Row, floor: Row): string[] {
  if (!row.counts.length || !floor.counts.length) return [];
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

/**
 * How many times the main thread called V8's Runtime_DefineKeyedOwnPropertyInLiteral: an object
 * literal's computed key defined by the runtime rather than by optimized code. node's own
 * process.nextTick builds each tick object with computed keys, and node:http queues about seven ticks
 * a request; in some processes V8 optimizes nextTick with that site's feedback no longer monomorphic,
 * and each key then costs about 1 300 instructions in the runtime, some 36 000 a request, in every
 * count of that process. A count with such keys is not comparable with one without (docs/benchmarks.md).
 * Read from the dump's call records: a `cfn=(id)` line names a callee, the `calls=N` line after it counts.
 */
function literalKeysInRuntime(dumpFile: string): number {
  const lines = readFileSync(dumpFile, 'utf8').split('\n');
  let id: string | undefined;
  let calls = 0;
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index];
    // A name is given once, at its id's first use, in an fn= or a cfn= line.
    const match = /^(c?fn)=(\(\d+\))(?: (.*))?$/.exec(line);
    if (!match) continue;
    if (match[3]?.includes('Runtime_DefineKeyedOwnPropertyInLiteral')) id = match[2];
    if (match[1] !== 'cfn' || id === undefined || match[2] !== id) continue;
    const next = lines[index + 1];
    if (next?.startsWith('calls=')) calls += Number(next.slice(6).split(' ')[0]);
  }
  return calls;
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
      `${row.counts.map((count) => count.helpersPerRequest).join(', ')}; literal keys defined in V8's runtime ` +
      `${row.counts.map((count) => count.runtimeLiteralKeys).join(', ')})`,
  );
// As the timed rows read: a service row's instructions above its floor, and against the baseline.
for (const row of rows) {
  if (row.floor)
    console.log(
      `${row.label}: ${Math.round((100 * medianOf(row.floor)) / medianOf(row))} % of it is its floor's; ` +
        `the service's own instructions above the floor: ${medianOf(row) - medianOf(row.floor)}.`,
    );
  if (row.fastifyFloor)
    console.log(
      `${row.label}: ${Math.round((100 * medianOf(row.fastifyFloor)) / medianOf(row))} % of it is Fastify's floor; ` +
        `the service's own instructions above Fastify's floor: ${medianOf(row) - medianOf(row.fastifyFloor)}.`,
    );
  if (row.counterpart) {
    const change = (100 * (medianOf(row.counterpart) - medianOf(row))) / medianOf(row);
    console.log(
      `${row.counterpart.label}: ${medianOf(row.counterpart)} against ${medianOf(row)} at ${BASELINE} ` +
        `(${change >= 0 ? '+' : ''}${change.toFixed(1)} %).`,
    );
  }
}
for (const line of functionLines) console.log(line);
