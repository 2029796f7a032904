// Gives memory back to the system when the process is idle. V8 grows its young generation to fit
// the busiest moment (the start: migrations, the demo seed, the research index; later a burst of
// requests) and keeps those pages resident while idle: a third of an idle instance's memory was an
// empty young generation. A memory-reducing collection shrinks it and returns the freed pages; it
// blocks the thread for tens of milliseconds, so it runs only once a window has passed with the
// event loop idle, and once per busy spell. See docs/deployment.md#memory.
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type Collect = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

let collect: Collect | undefined;

/** V8's collector, from a fresh context: the flag exposes it there, never on this realm's global. */
function collector(): Collect {
  if (!collect) {
    setFlagsFromString('--expose-gc');
    collect = runInNewContext('gc') as Collect;
  }
  return collect;
}

function residentMb(): number {
  return Math.round(process.memoryUsage.rss() / 1048576);
}

export interface Trimmed {
  beforeMb: number;
  afterMb: number;
  ms: number;
}

/** One memory-reducing collection now; what the process held before and after. */
export function trimMemory(): Trimmed {
  const beforeMb = residentMb();
  const started = performance.now();
  collector()({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  return { beforeMb, afterMb: residentMb(), ms: Math.round(performance.now() - started) };
}

/** The share of a window the event loop spent working, under which the process counts as idle. */
const IDLE_UTILIZATION = 0.02;

/**
 * Trims after every busy spell once a whole window of `idleMs` passes idle. Returns its stop. The
 * timer is unref'd: it never keeps the process alive.
 */
export function trimWhenIdle(idleMs: number, onTrim: (trimmed: Trimmed) => void): () => void {
  let last = performance.eventLoopUtilization();
  let busySinceTrim = false;
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const idle = performance.eventLoopUtilization(now, last).utilization < IDLE_UTILIZATION;
    last = now;
    if (!idle) {
      busySinceTrim = true;
      return;
    }
    if (!busySinceTrim) return;
    busySinceTrim = false;
    onTrim(trimMemory());
    // The collection itself is not work to trim after.
    last = performance.eventLoopUtilization();
  }, idleMs);
  timer.unref();
  return () => clearInterval(timer);
}
