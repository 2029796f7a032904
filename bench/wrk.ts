// A second load generator for the anonymous events list. autocannon (JavaScript) spends about as much
// CPU on each events-list answer as the server does: it decodes every body into a string, and a body
// with non-ASCII text takes V8's slow path. On its own core it then caps the events list and
// node:http's floor for it at the same rate. wrk (C, Debian's `wrk` package) spends a few µs per answer, so with it the server alone
// sets the pace. Its rows are left out when wrk is not installed.
import { spawnSync } from 'node:child_process';
import { CONNECTIONS, cpuMicros, type Figures, SECONDS, WARMUP_SECONDS } from './support.ts';

export const WRK_INSTALLED = spawnSync('wrk', ['--version']).error === undefined;

/** wrk prints durations as 714.00us, 2.67ms or 1.02s. */
function milliseconds(text: string): number {
  const [, value, unit] = /^([\d.]+)(us|ms|s)$/.exec(text) ?? [];
  const scale = unit === 'us' ? 0.001 : unit === 's' ? 1000 : 1;
  return Math.round(Number(value) * scale * 100) / 100;
}

/**
 * wrk's report of `seconds` of load on `url`: one thread, `connections` connections; `script`, a
 * Lua file that shapes the requests (a POST and its body, say).
 */
export function wrk(
  url: string,
  seconds: number,
  headers: Record<string, string>,
  connections = CONNECTIONS,
  script?: string,
): string {
  const args = ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency'];
  if (script) args.push('-s', script);
  for (const [name, value] of Object.entries(headers)) args.push('-H', `${name}: ${value}`);
  // This process is pinned to core 1 (pinLoadGenerator); wrk inherits it.
  const run = spawnSync('wrk', [...args, url], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`wrk failed: ${run.stderr}`);
  return run.stdout;
}

/** The same figures as `load`, with wrk as the load generator (its own CPU is not measured). */
export function wrkLoad(
  name: string,
  url: string,
  pid: number,
  headers: Record<string, string> = {},
): Figures {
  if (WARMUP_SECONDS > 0) wrk(url, WARMUP_SECONDS, headers);
  const cpuBefore = cpuMicros(pid);
  const output = wrk(url, SECONDS, headers);
  const total = Number(/(\d+) requests in/.exec(output)?.[1]);
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
  return {
    name,
    requestsPerSecond: Math.round(Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1])),
    p50: milliseconds(/ 50%\s+(\S+)/.exec(output)?.[1] ?? ''),
    p99: milliseconds(/ 99%\s+(\S+)/.exec(output)?.[1] ?? ''),
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(output)?.[1] ?? 0),
    errors: socketErrors ? socketErrors.slice(1).reduce((sum, count) => sum + Number(count), 0) : 0,
    cpuPerRequest: Math.round((cpuMicros(pid) - cpuBefore) / total),
  };
}
