import { counterKey, type RatePolicy, windowBounds } from '../core/rate-limit.ts';
import type { Deps } from './services.ts';

/**
 * One hit on a per-IP window of a minute, counted in the short-window store (as device-code entries
 * are), for the endpoints that speak a wire format of their own (OAuth) instead of the pipeline's.
 * True when the hit is over `limit`.
 */
export async function overPerIpLimit(
  deps: Pick<Deps, 'clock' | 'windowCounters'>,
  name: string,
  limit: number,
  ip: string,
): Promise<boolean> {
  const policy: RatePolicy = { name, limit, window: 60, per: 'ip' };
  const now = deps.clock.now();
  const count = await deps.windowCounters.hit(
    counterKey(policy, ip, now),
    windowBounds(policy, now).end,
    now,
  );
  return count > limit;
}
