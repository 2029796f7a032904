// Gives memory back to the system when the process is idle (MEMORY_TRIM_IDLE_MS, off by default).
// V8 grows its young generation to fit the busiest moment (the start: migrations, the demo seed, the
// research index; later a burst of requests) and keeps it while idle: 64 MB of space holding a few
// MB, a third of an idle instance. A full collection while allocation is low lets V8 shrink it to its
// minimum and hand the pages back some seconds later (180 → 118 MB on the demo database). The price
// is paid after: until the young generation has grown back, requests cost more CPU (setup-check 15
// → 17-19 µs over four 12 s rounds), which is why it is the operator's choice. A collection runs only
// once a window has passed with the event loop idle, once per busy spell. See docs/deployment.md#memory.
import { performance } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type Collect = (options: { type: 'major'; execution: 'sync' }) => void;

let collect: Collect | undefined;

/** V8's collector, from a fresh context: the flag exposes it there, never on this realm's global. */
function collector(): Collect {
  if (!collect) {
    setFlagsFromString('--expose-gc');
    collect = runInNewContext('gc') as Collect;
  }
  return collect;
}

function youngGenerationMb(): number {
  const space = getHeapSpaceStatistics().find((each) => each.space_name === 'new_space');
  return Math.round((space?.space_size ?? 0) / 1048576);
}

export interface Trimmed {
  /** The process's resident size before; the pages freed leave it over the next seconds. */
  residentMb: number;
  /** V8's young generation before and after. */
  youngBeforeMb: number;
  youngAfterMb: number;
  ms: number;
}

/** One full collection now. */
export function trimMemory(): Trimmed {
  const residentMb = Math.round(process.memoryUsage.rss() / 1048576);
  const youngBeforeMb = youngGenerationMb();
  const started = performance.now();
  collector()({ type: 'major', execution: 'sync' });
  const ms = Math.round(performance.now() - started);
  return { residentMb, youngBeforeMb, youngAfterMb: youngGenerationMb(), ms };
}

/** Shares of a window the event loop spent working: under the first it was idle, from the second busy. */
const IDLE_UTILIZATION = 0.02;
const BUSY_UTILIZATION = 0.2;

/**
 * Trims after every busy spell (a window of `idleMs` at least a fifth busy) once a whole window
 * passes idle. Returns its stop. The timer is unref'd: it never keeps the process alive.
 */
export function trimWhenIdle(idleMs: number, onTrim: (trimmed: Trimmed) => void): () => void {
  let last = performance.eventLoopUtilization();
  let busySinceTrim = false;
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(now, last);
    last = now;
    // A window in between (a timer, V8's own collection after a trim) counts as neither.
    if (utilization >= BUSY_UTILIZATION) busySinceTrim = true;
    if (utilization >= IDLE_UTILIZATION || !busySinceTrim) return;
    busySinceTrim = false;
    onTrim(trimMemory());
    // The collection itself is not work to trim after.
    last = performance.eventLoopUtilization();
  }, idleMs);
  timer.unref();
  return () => clearInterval(timer);
}
