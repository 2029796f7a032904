import { serializeList } from 'structured-headers';
import { MS, utcDayStart } from '../clock.ts';

/** RateInfo (spec 2.1): the per-token snapshot write endpoints return. */
export interface RateInfo {
  current: number;
  remaining: number;
  limit: number;
}

export type RateSubject = 'ip' | 'token' | 'member';

export interface RatePolicy {
  /** Named in RateLimit-Policy; also the counter's key space. */
  name: string;
  limit: number;
  /** Fixed window in seconds, or the UTC calendar day ("back off to the next UTC day"). */
  window: number | 'utc_day';
  per: RateSubject;
}

export interface PolicyOutcome {
  policy: RatePolicy;
  count: number;
  resetSeconds: number;
}

export function windowBounds(policy: RatePolicy, now: number): { start: number; end: number } {
  if (policy.window === 'utc_day') {
    const start = utcDayStart(now);
    return { start, end: start + MS.day };
  }
  const size = policy.window * MS.second;
  const start = now - (now % size);
  return { start, end: start + size };
}

export function counterKey(policy: RatePolicy, subject: string, now: number): string {
  return `${policy.name}:${subject}:${windowBounds(policy, now).start}`;
}

export function outcomeFor(policy: RatePolicy, count: number, now: number): PolicyOutcome {
  const { end } = windowBounds(policy, now);
  return { policy, count, resetSeconds: Math.max(1, Math.ceil((end - now) / MS.second)) };
}

export function rateInfo(outcome: PolicyOutcome): RateInfo {
  const { limit } = outcome.policy;
  const current = Math.min(outcome.count, limit);
  return { current, remaining: Math.max(0, limit - outcome.count), limit };
}

function windowSeconds(policy: RatePolicy): number {
  return policy.window === 'utc_day' ? MS.day / MS.second : policy.window;
}

const policyHeaders = new Map<string, string>();

/** RateLimit-Policy depends only on which policies applied, so each combination is serialized once. */
const singlePolicyHeaders = new WeakMap<RatePolicy, string>();
/** A write's pair: the token's window and the operation's quota, by the identity of both. */
const pairPolicyHeaders = new WeakMap<RatePolicy, WeakMap<RatePolicy, string>>();

function policyHeader(outcomes: PolicyOutcome[]): string {
  // Most calls are charged one or two long-lived policy objects: remember their header by identity.
  if (outcomes.length === 1) {
    const cached = singlePolicyHeaders.get(outcomes[0].policy);
    if (cached !== undefined) return cached;
  }
  if (outcomes.length === 2) {
    const cached = pairPolicyHeaders.get(outcomes[0].policy)?.get(outcomes[1].policy);
    if (cached !== undefined) return cached;
  }
  const id = outcomes.map((o) => `${o.policy.name}/${o.policy.limit}/${o.policy.window}`).join(',');
  let value = policyHeaders.get(id);
  if (value === undefined) {
    value = serializeList(
      outcomes.map((o) => [
        o.policy.name,
        new Map<string, number>([
          ['q', o.policy.limit],
          ['w', windowSeconds(o.policy)],
        ]),
      ]),
    );
    if (policyHeaders.size < 256) policyHeaders.set(id, value);
  }
  if (outcomes.length === 1) singlePolicyHeaders.set(outcomes[0].policy, value);
  if (outcomes.length === 2) {
    let second = pairPolicyHeaders.get(outcomes[0].policy);
    if (!second) {
      second = new WeakMap();
      pairPolicyHeaders.set(outcomes[0].policy, second);
    }
    second.set(outcomes[1].policy, value);
  }
  return value;
}

/**
 * RateLimit and RateLimit-Policy (RFC 9651 lists, draft-ietf-httpapi-ratelimit-headers) naming every
 * policy that applied, plus the older RateLimit-Limit/-Remaining/-Reset for the tightest one.
 */
export function rateLimitHeaders(outcomes: PolicyOutcome[]): Record<string, string> {
  if (outcomes.length === 0) return {};
  // Policy names are plain tokens and the values integers, so each member serializes as exactly
  // "name";r=N;t=N (what serializeList prints, checked in test/rate-limits.test.ts) without its cost.
  const current = outcomes
    .map((o) => `"${o.policy.name}";r=${Math.max(0, o.policy.limit - o.count)};t=${o.resetSeconds}`)
    .join(', ');
  const tightest = outcomes.reduce((a, b) => (b.policy.limit - b.count < a.policy.limit - a.count ? b : a));
  return {
    'ratelimit-policy': policyHeader(outcomes),
    ratelimit: current,
    'ratelimit-limit': String(tightest.policy.limit),
    'ratelimit-remaining': String(Math.max(0, tightest.policy.limit - tightest.count)),
    'ratelimit-reset': String(tightest.resetSeconds),
  };
}
