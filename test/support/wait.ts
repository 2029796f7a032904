/**
 * Resolves once `condition` holds, checking it every `everyMs`; fails naming `what` after
 * `timeoutMs`. For waiting on a state the test can observe rather than on a guessed duration.
 */
export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  what: string,
  { timeoutMs = 15_000, everyMs = 20 }: { timeoutMs?: number; everyMs?: number } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/**
 * Per-minute limits count in fixed windows aligned to the clock's minute (src/core/rate-limit.ts), so
 * a burst that a test expects to be refused past its limit must not straddle a minute's end, where the
 * count starts again. A spawned server shares this clock: waits, if need be, into the next minute so
 * that at least `marginMs` of the current one is left.
 */
export async function clearOfMinuteEnd(marginMs = 10_000): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < marginMs) await new Promise((resolve) => setTimeout(resolve, left + 50));
}
