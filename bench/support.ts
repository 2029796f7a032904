import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import autocannon from 'autocannon';
import pg from 'pg';

export interface Figures {
  name: string;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  /** Server CPU per request, in microseconds: steadier than req/s when the machine is busy. */
  cpuPerRequest?: number;
  /** The load generator's own CPU per request: near 1 000 000 / req/s, it was the bottleneck. */
  clientCpuPerRequest?: number;
}

export const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
/** Unmeasured load first, so the JIT has compiled the hot path before the figures are taken. */
export const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 2);

/** CPU time (user + system) the process has used so far, in microseconds. */
export function cpuMicros(pid: number): number {
  const { user, system } = cpuTimes(pid);
  return user + system;
}

/** A process's user and system CPU so far, apart, in µs (from /proc: clock ticks of 10 ms). */
export function cpuTimes(pid: number): { user: number; system: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return { user: Number(fields[11]) * 10_000, system: Number(fields[12]) * 10_000 };
}

const PINNED = availableParallelism() >= 2 && spawnSync('taskset', ['-V']).status === 0;

/** The machine's CPU time so far, in clock ticks: all of it, and what the hypervisor took (steal). */
export function machineTicks(): { total: number; stolen: number } {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    return { total: fields.reduce((sum, value) => sum + value, 0), stolen: fields[7] ?? 0 };
  } catch {
    return { total: 0, stolen: 0 };
  }
}

/** The share of the machine's CPU time the hypervisor took since `before` (a virtual machine's steal). */
export function stolenShare(before: { total: number; stolen: number }): number {
  const after = machineTicks();
  const total = after.total - before.total;
  return total > 0 ? (after.stolen - before.stolen) / total : 0;
}

/** Moves this process (autocannon's) to core 1 when cores can be pinned. */
export function pinLoadGenerator(): boolean {
  if (!PINNED) return false;
  return spawnSync('taskset', ['-a', '-cp', '1', String(process.pid)]).status === 0;
}

/** A node of a V8 `.cpuprofile` (what `--cpu-prof` writes). */
export interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount: number;
}

/** The one `.cpuprofile` that a server run with `--cpu-prof-dir=dir` wrote as it exited, and its path. */
export function readCpuProfile(dir: string): {
  path: string;
  profile: { nodes: CpuProfileNode[]; startTime: number; samples: number[]; timeDeltas: number[] };
} {
  const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'));
  if (!file) throw new Error(`no profile in ${dir}`);
  return { path: join(dir, file), profile: JSON.parse(readFileSync(join(dir, file), 'utf8')) };
}

/** A profiled function as the profile readers print it: its name, and its file from src/ or node_modules/. */
export function profiledFunction({ functionName, url, lineNumber }: CpuProfileNode['callFrame']): string {
  return `${functionName || '(anon)'} ${url.replace(/^.*\/(node_modules|src)\//, '$1/')}:${lineNumber + 1}`;
}

export function residentMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round(kb / 1024);
}

export async function waitFor(url: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(1000) });
      if (response.ok) return;
    } catch {
      // not up yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${url} did not come up`);
}

export interface Server {
  url: string;
  child: ChildProcess;
  /** Date.now() when the server's "listening on" line arrived. */
  listenedAt: number;
  stop(): Promise<void>;
}

/** The address a server prints once it listens ("… listening on http://host:port …"). */
function printedAddress(child: ChildProcess, timeoutMs = 20_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let printed: string | undefined = '';
    const timer = setTimeout(() => reject(new Error(`no address printed: ${printed}`)), timeoutMs);
    child.once('exit', (code) =>
      reject(new Error(`the server exited (${code}) before listening: ${printed}`)),
    );
    // Read to the end (a full pipe would stall the server); only the first lines matter.
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      if (printed === undefined) return;
      printed += chunk;
      const url = /listening on (http:\/\/[^\s]+)/.exec(printed)?.[1];
      if (!url) return;
      printed = undefined;
      clearTimeout(timer);
      resolve(url);
    });
  });
}

export async function startProcess(
  args: string[],
  env: Record<string, string>,
  health: string,
  /** A command the server runs under (valgrind, say), and how long its start may then take. */
  under: { launcher: string[]; timeoutMs: number } = { launcher: [], timeoutMs: 20_000 },
): Promise<Server> {
  // The server gets core 0 and the load generator core 1 (see pinLoadGenerator), so the two never
  // trade places mid-run and the figures repeat from run to run.
  const server = [...under.launcher, process.execPath, ...args];
  const [command, ...commandArgs] = PINNED ? ['taskset', '-c', '0', ...server] : server;
  // Port 0: the server listens where listen(0) puts it and prints the address.
  const child = spawn(command, commandArgs, {
    env: { ...process.env, ...env, PORT: '0', HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await printedAddress(child, under.timeoutMs);
  const listenedAt = Date.now();
  await waitFor(url + health, under.timeoutMs);
  return {
    url,
    child,
    listenedAt,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** The middle value (the upper of the two middle ones for an even count), as every bench reports rounds. */
export function median(values: number[]): number {
  return [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)];
}

/** One of the sides (servers, or requests to one server) loaded in turns by interleavedRounds. */
export interface RoundSide {
  label: string;
  server: Server;
  request: autocannon.Options;
  /** Appended to the side's line each round (the resident size, say). */
  note?: () => string;
}

/** A side's medians over the rounds, and each round's figures. */
export interface RoundMedians {
  rps: number;
  cpu: number;
  rounds: Figures[];
}

/**
 * Loads the sides in interleaved rounds (each round starts one side later: with two, the first goes
 * first in odd rounds, the second in even ones), prints every round, and returns each side's
 * medians: a before-and-after on the same machine and minutes. Prints each side's change against
 * the first.
 */
export async function interleavedRounds(
  name: string,
  sides: RoundSide[],
  rounds: number,
): Promise<RoundMedians[]> {
  const figures = sides.map(() => ({ rps: [] as number[], cpu: [] as number[], rounds: [] as Figures[] }));
  for (let round = 1; round <= rounds; round++) {
    for (let turn = 0; turn < sides.length; turn++) {
      const index = (round - 1 + turn) % sides.length;
      const side = sides[index];
      const result = await load(`${round}: ${name} ${side.label}`, side.request, side.server.child.pid);
      figures[index].rps.push(result.requestsPerSecond);
      figures[index].cpu.push(result.cpuPerRequest ?? 0);
      figures[index].rounds.push(result);
      console.log(
        `round ${round} ${side.label}: ${result.requestsPerSecond} req/s, ${result.cpuPerRequest} µs/req, ` +
          `${result.non2xx} non-2xx${side.note ? `, ${side.note()}` : ''}`,
      );
    }
  }
  const medians = figures.map((each) => ({
    rps: median(each.rps),
    cpu: median(each.cpu),
    rounds: each.rounds,
  }));
  const [first] = medians;
  const others = medians
    .slice(1)
    .map(
      (side, index) =>
        `${sides[index + 1].label} ${side.rps} req/s (${side.cpu} µs): ${(((side.rps - first.rps) / first.rps) * 100).toFixed(1)} %`,
    );
  console.log(
    `${name} medians: ${sides[0].label} ${first.rps} req/s (${first.cpu} µs), ${others.join(', ')}`,
  );
  return medians;
}

export function cli(args: string[], env: Record<string, string>): string {
  return execFileSync(process.execPath, ['bin/agent-commons.js', ...args], {
    env: { ...process.env, ...env },
  }).toString();
}

export async function load(name: string, options: autocannon.Options, pid?: number): Promise<Figures> {
  if (WARMUP_SECONDS > 0)
    await autocannon({ connections: CONNECTIONS, ...options, duration: WARMUP_SECONDS });
  const cpuBefore = pid ? cpuMicros(pid) : 0;
  const clientBefore = process.cpuUsage();
  const result = await autocannon({ connections: CONNECTIONS, duration: SECONDS, ...options });
  // To a tenth of a µs: a change to a cached read moves it by one or two µs.
  const cpuPerRequest = pid
    ? Math.round((10 * (cpuMicros(pid) - cpuBefore)) / result.requests.total) / 10
    : undefined;
  const client = process.cpuUsage(clientBefore);
  return {
    cpuPerRequest,
    clientCpuPerRequest: Math.round((client.user + client.system) / result.requests.total),
    name,
    requestsPerSecond: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

/** A row's req/s as a percentage of its reference row's in the same round. */
export const rateShare = (row: Figures, reference: Figures): number =>
  Math.round((100 * row.requestsPerSecond) / reference.requestsPerSecond);

/**
 * The reference row's server CPU a request over the row's, as a percentage: the reading that holds
 * when other work takes the core.
 */
export const cpuShare = (row: Figures, reference: Figures): string =>
  row.cpuPerRequest && reference.cpuPerRequest
    ? `${Math.round((100 * reference.cpuPerRequest) / row.cpuPerRequest)}%`
    : '?';

/**
 * Each row's "vs baseline" is against the last of `baselines` above it (the first one for rows before
 * any); with no baselines (the research rows, which have no hello world to compare with) no such column.
 */
export function report(rows: Figures[], baselines: Figures[] = []): void {
  let baseline = baselines[0];
  const table = rows.map((r) => {
    if (baselines.includes(r)) baseline = r;
    return {
      scenario: r.name,
      'req/s': r.requestsPerSecond,
      ...(baseline && {
        'vs baseline': `${Math.round((100 * r.requestsPerSecond) / baseline.requestsPerSecond)}%`,
      }),
      'p50 ms': r.p50,
      'p99 ms': r.p99,
      non2xx: r.non2xx,
      errors: r.errors,
      'server CPU µs/req': r.cpuPerRequest ?? '',
      'load gen. µs/req': r.clientCpuPerRequest ?? '',
    };
  });
  console.table(table);
}

/** A core member and a token for it, made with the CLI in the bench database (before any server runs). */
export function mintBenchToken(
  env: Record<string, string>,
  label: string,
  scopes: string,
  sandbox = false,
  tier = 'core',
): { memberId: string; token: string } {
  const member = JSON.parse(
    cli(
      [
        'member',
        'create',
        '--email',
        `bench-${label}@example.org`,
        '--name',
        'Bench',
        '--tier',
        tier,
        '--json',
      ],
      env,
    ),
  );
  const args = ['token', 'mint', '--member', member.id, '--scopes', scopes, '--json'];
  return {
    memberId: member.id as string,
    token: JSON.parse(cli(sandbox ? [...args, '--sandbox'] : args, env)).token,
  };
}

/** The body of a highlight submission, as the sandbox and durable highlight writes post it. */
export function highlightStory(id: string): string {
  return JSON.stringify({
    id,
    event_title: 'Bench night',
    dek: 'A short recap of the night.',
    date: '2026-07-16',
  });
}

/**
 * Every bench server's settings but its database: no demo seed, quiet logs, and limits far above any
 * load, so the rows measure the service, not its refusals. Browser sessions are charged to the
 * anonymous per-IP budget (scenario e1). No idle trim: a row waits 20 s or more for its turn while
 * other rows run, and a trim in that gap would make the rows after it depend on the order of the
 * run; bench/idle-trim.ts measures what a trim saves and costs.
 */
const BENCH_SETTINGS = {
  SEED_DEMO: 'false',
  LOG_LEVEL: 'warn',
  MEMORY_TRIM_IDLE_MS: '0',
  LIMIT_ANONYMOUS_PER_MINUTE: '100000000',
  LIMIT_TOKEN_PER_MINUTE: '100000000',
  LIMIT_HIGHLIGHTS_PER_DAY: '100000000',
};

/** A fresh embedded database for a bench, in a temporary directory. */
export function benchEnvironment(prefix: string): { dir: string; env: Record<string, string> } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, env: { DATABASE_URL: `sqlite:${join(dir, 'bench.db')}`, ...BENCH_SETTINGS } };
}

/** An MCP `tools/call` POST as a Streamable HTTP client sends it, with a bearer when one is given. */
export function mcpToolCall(url: string, tool: string, args: Record<string, unknown>, token?: string) {
  return {
    url,
    method: 'POST' as const,
    headers: {
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: tool, arguments: args },
    }),
  };
}

/** The same tools/call at MCP revision 2026-07-28: its version, client and capabilities in `_meta`, the headers it mirrors. */
export function mcpModernToolCall(url: string, tool: string, args: Record<string, unknown>, token?: string) {
  const version = '2026-07-28';
  return {
    url,
    method: 'POST' as const,
    headers: {
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      'mcp-protocol-version': version,
      'mcp-method': 'tools/call',
      'mcp-name': tool,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: tool,
        arguments: args,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': version,
          'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1.0.0' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
  };
}

const BENCH_POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

async function postgresAdmin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: BENCH_POSTGRES_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Whether the server BENCH_POSTGRES_URL names answers (the full run measures the PostgreSQL rows only then). */
export async function postgresReachable(): Promise<boolean> {
  try {
    await postgresAdmin('SELECT 1');
    return true;
  } catch {
    return false;
  }
}

/**
 * A fresh PostgreSQL database for one bench, on the server BENCH_POSTGRES_URL names (default the
 * local test server): migrated, with the bench settings and `extra`, and dropped afterwards.
 */
export async function withBenchPostgres<T>(
  run: (env: Record<string, string>) => Promise<T>,
  extra: Record<string, string> = {},
): Promise<T> {
  const name = `ac_bench_${randomBytes(4).toString('hex')}`;
  await postgresAdmin(`CREATE DATABASE ${name}`);
  const url = new URL(BENCH_POSTGRES_URL);
  url.pathname = `/${name}`;
  const env = { DATABASE_URL: url.toString(), ...BENCH_SETTINGS, ...extra };
  try {
    cli(['migrate'], env);
    return await run(env);
  } finally {
    await postgresAdmin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}
