// Runs the real CLI (bin/agent-commons.js) as child processes: one-shot admin commands, and the
// server itself for tests that need a process they can kill. Every child started here is tracked so a
// test file can kill whatever is still alive in its `after` hook.
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = fileURLToPath(new URL('../../bin/agent-commons.js', import.meta.url));

const live = new Set<ChildProcess>();

/** Settings a developer's shell (or the test runner) might carry are dropped; each test sets its own. */
const INHERITED_SETTINGS = [
  'NODE_TEST_CONTEXT',
  'NODE_OPTIONS',
  'DATABASE_URL',
  'PORT',
  'HOST',
  'PUBLIC_URL',
  'SEED_DEMO',
  'TIERS_FILE',
  'TRUST_PROXY',
  'HTTP_REQUEST_TIMEOUT_MS',
  'HTTP_HEADERS_TIMEOUT_MS',
  'HTTP_KEEP_ALIVE_TIMEOUT_MS',
  'HTTP_MAX_CONNECTIONS_PER_ADDRESS',
  'BODY_LIMIT_BYTES',
  'LOG_LEVEL',
];

export function childEnv(databaseUrl: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(env)) {
    if (INHERITED_SETTINGS.includes(key) || key.startsWith('LIMIT_')) delete env[key];
  }
  return { ...env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', CHECK_OUTPUT_SCHEMAS: 'true', ...extra };
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Starts bin/agent-commons.js with these arguments, tracked, collecting what it prints. */
function spawnTracked(args: string[], env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  const output = { stdout: '', stderr: '' };
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    output.stdout += chunk;
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    output.stderr += chunk;
  });
  return { child, output };
}

/** One CLI command to completion (killed after `timeoutMs`). */
export function runCli(
  databaseUrl: string,
  args: string[],
  options: { env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const { child, output } = spawnTracked(args, childEnv(databaseUrl, options.env));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      live.delete(child);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      live.delete(child);
      resolve({ code, signal, ...output });
    });
  });
}

/** A command that must succeed and print JSON. */
export async function runCliJson<T = any>(databaseUrl: string, args: string[]): Promise<T> {
  const result = await runCli(databaseUrl, [...args, '--json']);
  if (result.code !== 0) {
    throw new Error(`agent-commons ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  }
  return JSON.parse(result.stdout) as T;
}

export interface ServerProcess {
  child: ChildProcess;
  baseUrl: string;
  stdout(): string;
  stderr(): string;
  /** Resolves once the process has exited (immediately when it already has). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

async function answersHealthz(baseUrl: string): Promise<boolean> {
  try {
    const response = await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(1000) });
    await response.body?.cancel();
    return response.status === 200;
  } catch {
    return false; // not listening yet
  }
}

/** The address `serve` says it listens on (its first line), once it has said so. */
function listeningAt(stdout: string): string | undefined {
  return /^agent-commons listening on (http:\/\/[^\s]+)/m.exec(stdout)?.[1];
}

/**
 * `agent-commons serve`; resolves once /healthz answers 200. Without `port` it listens where
 * listen(0) puts it and the address comes from the line it prints (its public URL then names
 * port 0: pass a port from freePort where the test needs the URLs it prints or mails).
 */
export async function startServer(
  databaseUrl: string,
  options: { port?: number; args?: string[]; env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<ServerProcess> {
  const port = options.port ?? 0;
  const { child, output } = spawnTracked(
    ['serve', ...(options.args ?? [])],
    childEnv(databaseUrl, { PORT: String(port), HOST: '127.0.0.1', ...options.env }),
  );
  let done = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      done = true;
      live.delete(child);
      resolve({ code, signal });
    });
  });
  const server: ServerProcess = {
    child,
    baseUrl: port === 0 ? '' : `http://127.0.0.1:${port}`,
    stdout: () => output.stdout,
    stderr: () => output.stderr,
    exited,
    async kill(signal = 'SIGKILL') {
      if (!done) child.kill(signal);
      return exited;
    },
  };
  const deadline = Date.now() + (options.timeoutMs ?? 45_000);
  while (true) {
    if (done)
      throw new Error(`the server exited before answering /healthz: ${output.stderr}${output.stdout}`);
    server.baseUrl ||= listeningAt(output.stdout) ?? '';
    if (server.baseUrl && (await answersHealthz(server.baseUrl))) return server;
    if (Date.now() > deadline) {
      await server.kill();
      throw new Error(`the server did not answer /healthz in time: ${output.stderr}${output.stdout}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Kills every child this module started that is still running (for `after` hooks). */
export async function killAllChildren(): Promise<void> {
  const waits = [...live].map(
    (child) =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  );
  await Promise.all(waits);
  live.clear();
}

/** A long-running CLI command the test stops itself (kill -9 by default). */
export function startCli(databaseUrl: string, args: string[], env: Record<string, string> = {}) {
  const { child, output } = spawnTracked(args, childEnv(databaseUrl, env));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      live.delete(child);
      resolve({ code, signal });
    }),
  );
  return {
    output,
    exited,
    kill: (signal: NodeJS.Signals = 'SIGKILL') => {
      child.kill(signal);
      return exited;
    },
  };
}
