import { type ApiError, apiError } from '../../core/errors.ts';
import {
  counterKey,
  outcomeFor,
  type PolicyOutcome,
  type RatePolicy,
  rateInfo,
  rateLimitHeaders,
  windowBounds,
} from '../../core/rate-limit.ts';
import type { Principal } from '../../domain/auth/principal.ts';
import { counters } from '../../storage/counters.ts';
import { SHORT_WINDOW_SECONDS } from '../../storage/window-counters.ts';
import type { Deps } from '../services.ts';

const defaultPolicyCache = new WeakMap<object, { anonymous: RatePolicy; token: RatePolicy }>();

/** The default policies every call is charged against (spec §8), keyed by who is calling. */
export function defaultPolicies(deps: Deps): { anonymous: RatePolicy; token: RatePolicy } {
  let policies = defaultPolicyCache.get(deps.config.limits);
  if (!policies) {
    policies = {
      anonymous: { name: 'anonymous', limit: deps.config.limits.anonymousPerMinute, window: 60, per: 'ip' },
      token: { name: 'token', limit: deps.config.limits.tokenPerMinute, window: 60, per: 'token' },
    };
    defaultPolicyCache.set(deps.config.limits, policies);
  }
  return policies;
}

function subjectOf(policy: RatePolicy, principal: Principal, ip: string): string | undefined {
  if (policy.per === 'ip') return ip;
  if (principal.kind === 'anonymous') return undefined;
  if (policy.per === 'member') return principal.member.id;
  return principal.kind === 'bearer' ? principal.token.id : undefined;
}

/** The window a policy counted last: for whom, from when to when, and its counter's key. */
interface CountedWindow {
  subject: string;
  start: number;
  end: number;
  key: string;
}

const lastWindows = new WeakMap<RatePolicy, CountedWindow>();

/**
 * The counter's key and end for this subject's current window. The same caller in the same window
 * (an agent's run of calls) gets the same key string again: building it anew, and having the
 * counter store's Map hash the new string in full, cost more than the rest of counting it.
 */
function windowOf(policy: RatePolicy, subject: string, now: number): CountedWindow {
  const last = lastWindows.get(policy);
  if (last && last.subject === subject && now >= last.start && now < last.end) return last;
  const { start, end } = windowBounds(policy, now);
  const counted = { subject, start, end, key: counterKey(policy, subject, now) };
  lastWindows.set(policy, counted);
  return counted;
}

export interface Charged {
  outcomes: PolicyOutcome[];
  exceeded?: PolicyOutcome;
}

/**
 * Counts the call against each policy. When every counter answers at once (the in-memory store of
 * the embedded engine) so does this, without a promise: the common read is charged synchronously.
 */
export function charge(
  deps: Deps,
  policies: RatePolicy[],
  principal: Principal,
  ip: string,
  now: number,
): Charged | Promise<Charged> {
  const outcomes: PolicyOutcome[] = [];
  for (let i = 0; i < policies.length; i++) {
    const policy = policies[i];
    const subject = subjectOf(policy, principal, ip);
    if (subject === undefined) continue;
    const { key, end: expiresAt } = windowOf(policy, subject, now);
    const short = policy.window !== 'utc_day' && policy.window <= SHORT_WINDOW_SECONDS;
    const pending = short
      ? deps.windowCounters.hit(key, expiresAt, now)
      : counters.hit(deps.db, key, expiresAt);
    if (typeof pending !== 'number')
      return chargeRest(deps, policies.slice(i), pending, outcomes, principal, ip, now);
    outcomes.push(outcomeFor(policy, pending, now));
  }
  return { outcomes, exceeded: outcomes.find((o) => o.count > o.policy.limit) };
}

/** The rest of a charge once a counter answered with a promise (the first of `policies` is waiting). */
async function chargeRest(
  deps: Deps,
  policies: RatePolicy[],
  first: Promise<number>,
  outcomes: PolicyOutcome[],
  principal: Principal,
  ip: string,
  now: number,
): Promise<Charged> {
  outcomes.push(outcomeFor(policies[0], await first, now));
  const rest = await charge(deps, policies.slice(1), principal, ip, now);
  outcomes.push(...rest.outcomes);
  return { outcomes, exceeded: outcomes.find((o) => o.count > o.policy.limit) };
}

export function rateLimitedError(outcome: PolicyOutcome, message?: string): ApiError {
  return apiError('rate_limited', {
    message:
      message ??
      `Rate limit "${outcome.policy.name}" (${outcome.policy.limit} per ${
        outcome.policy.window === 'utc_day' ? 'UTC day' : `${outcome.policy.window} s`
      }) is exhausted.`,
    rate: rateInfo(outcome),
    retryAfterSeconds: outcome.resetSeconds,
    extra: {
      limit: outcome.policy.limit,
      policy: outcome.policy.name,
      violated_policies: [outcome.policy.name],
    },
  });
}

/**
 * Charges a request that never reached an operation (the /api/ catch-all, an unknown A2A capability,
 * an MCP exchange without a tool call) to the caller's per-IP anonymous budget; `refusal` is the 429
 * once that budget is spent.
 */
export async function chargeAnonymous(
  deps: Deps,
  ip: string,
): Promise<{ headers: Record<string, string>; refusal?: ApiError }> {
  const { outcomes, exceeded } = await charge(
    deps,
    [defaultPolicies(deps).anonymous],
    { kind: 'anonymous' },
    ip,
    deps.clock.now(),
  );
  return { headers: rateLimitHeaders(outcomes), refusal: exceeded ? rateLimitedError(exceeded) : undefined };
}
