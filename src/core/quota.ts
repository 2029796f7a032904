import { counters } from '../storage/counters.ts';
import type { Executor } from '../storage/schema.ts';
import { apiError } from './error-catalogue.ts';
import { counterKey, outcomeFor, type PolicyOutcome, type RatePolicy, windowBounds } from './rate-limit.ts';

function windowWords(policy: RatePolicy): string {
  return policy.window === 'utc_day' ? 'per UTC day' : `per ${policy.window} s`;
}

/** Where a spend of `policy` for `subject` is counted: its counter's key, its window's end and the limit. */
export function quotaCounter(
  policy: RatePolicy,
  subject: string,
  now: number,
): { key: string; expiresAt: number; limit: number } {
  return {
    key: counterKey(policy, subject, now),
    expiresAt: windowBounds(policy, now).end,
    limit: policy.limit,
  };
}

/**
 * The outcome of a spend whose counter now reads `count`; undefined means the quota was already
 * spent and nothing changed: throws the 429.
 */
export function spentQuota(
  policy: RatePolicy,
  count: number | undefined,
  now: number,
  advice = 'Back off until the window resets.',
): PolicyOutcome {
  if (count !== undefined) return outcomeFor(policy, count, now);
  const outcome = outcomeFor(policy, policy.limit + 1, now);
  throw apiError('rate_limited', {
    message: `At most ${policy.limit} ${policy.name} ${windowWords(policy)} per ${policy.per}. ${advice}`,
    rate: { current: policy.limit, remaining: 0, limit: policy.limit },
    retryAfterSeconds: outcome.resetSeconds,
    policies: [outcome],
    extra: {
      limit: policy.limit,
      window: policy.window,
      policy: policy.name,
      violated_policies: [policy.name],
    },
  });
}

/**
 * Spends one unit of a quota a handler counts itself (only when a side effect really happens), in
 * the caller's transaction, so the spend and the write commit together. Throws the 429 when spent.
 */
export async function takeQuota(
  trx: Executor,
  policy: RatePolicy,
  subject: string,
  now: number,
  advice?: string,
): Promise<PolicyOutcome> {
  const { key, limit, expiresAt } = quotaCounter(policy, subject, now);
  return spentQuota(policy, await counters.take(trx, key, limit, expiresAt), now, advice);
}

/** The quota's state without spending it (a deduplicated write reports it unchanged). */
export async function peekQuota(
  db: Executor,
  policy: RatePolicy,
  subject: string,
  now: number,
): Promise<PolicyOutcome> {
  return outcomeFor(policy, await counters.peek(db, counterKey(policy, subject, now)), now);
}
