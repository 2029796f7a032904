// Gives memory back to the system when the process is idle (MEMORY_TRIM_IDLE_MS, 30 s by default).
// V8 grows its young generation to fit the busiest moment (the start: migrations, the demo seed, the
// research index; later a burst of requests) and keeps it while idle: 64 MB of space holding a few
// MB, a third of an idle instance. V8's memory-reducing ("last-resort") collection shrinks it to its
// minimum at once (177 → 116-120 MB on the demo database, Node 22, 24 and 26); a regular full
// collection shrinks it only when V8 judges the allocation rate low, which after a load it often
// does not. The price is paid after: until the young generation has grown back, requests cost more
// CPU (10-20 % in the first 40 s of saturation, 5 % after a minute). So a collection
// runs only once a whole window has passed with the event loop idle, once per busy spell (the start
// counts as one): a busy instance is never trimmed. See docs/deployment.md#memory.
import { performance } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
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

/** One memory-reducing full collection now (a few tens of milliseconds on the demo database). */
export function trimMemory(): Trimmed {
  const residentMb = Math.round(process.memoryUsage.rss() / 1048576);
  const youngBeforeMb = youngGenerationMb();
  const started = performance.now();
  collector()({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  const ms = Math.round(performance.now() - started);
  return { residentMb, youngBeforeMb, youngAfterMb: youngGenerationMb(), ms };
}

/** Shares of a window the event loop spent working: under the first it was idle, from the second busy. */
const IDLE_UTILIZATION = 0.02;
const BUSY_UTILIZATION = 0.2;

/**
 * Trims after every busy spell (a window of `idleMs` at least a fifth busy, or the start when
 * `busyAtStart`) once a whole window passes idle. Returns its stop. The timer is unref'd: it never
 * keeps the process alive.
 */
export function trimWhenIdle(
  idleMs: number,
  onTrim: (trimmed: Trimmed) => void,
  { busyAtStart }: { busyAtStart: boolean },
): () => void {
  let last = performance.eventLoopUtilization();
  let busySinceTrim = busyAtStart;
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
