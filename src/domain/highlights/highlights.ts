import { MS } from '../../clock.ts';
import { apiError } from '../../core/errors.ts';
import { peekQuota, quotaCounter, spentQuota, takeQuota } from '../../core/quota.ts';
import type { PolicyOutcome, RatePolicy } from '../../core/rate-limit.ts';
import { highlights, type PendingStory } from '../../storage/highlights.ts';
import type { Page, PageRequest } from '../../storage/paging.ts';
import type { Executor, HighlightsTable } from '../../storage/schema.ts';
import { transact, type WritePort } from '../../storage/transactions.ts';
import { appendEvent } from '../eventlog/eventlog.ts';
import type { Clocked, Configured, Store } from '../ports.ts';

const RESUBMIT_ADVICE = 'Resubmitting a pending id is free. Back off to the next UTC day.';

/** How long a story waits for a moderator before it leaves the queue unreviewed. */
export const PENDING_TTL_MS = 7 * MS.day;

const quotaByLimits = new WeakMap<object, RatePolicy>();

/** One policy object per configuration: the answer's RateLimit-Policy header is kept by its identity. */
export function highlightQuota(deps: Configured<'limits'>): RatePolicy {
  const { limits } = deps.config;
  let policy = quotaByLimits.get(limits);
  if (!policy) {
    policy = { name: 'highlights', limit: limits.highlightsPerDay, window: 'utc_day', per: 'token' };
    quotaByLimits.set(limits, policy);
  }
  return policy;
}

export interface Submission {
  story: Record<string, unknown> & { id: string };
  memberId: string;
  tokenId: string;
}

export interface SubmitResult {
  id: string;
  expiresAt: number;
  refreshed: boolean;
  rate: PolicyOutcome;
}

/**
 * Files a story for moderation. A pending story with the same id is refreshed without spending the
 * daily quota; a new one spends it, atomically with the insert.
 */
export async function submitHighlight(
  deps: Store & Clocked & Configured<'limits'> & WritePort,
  submission: Submission,
): Promise<SubmitResult> {
  const now = deps.clock.now();
  const policy = highlightQuota(deps);
  const story = JSON.stringify(submission.story);
  const expiresAt = now + PENDING_TTL_MS;
  // Spent with or after the story: the quota row is the one every write of this token updates, and
  // its lock is held until the commit, so taking it last keeps one token's writes queued for the
  // least time. A spent quota throws, and the story written before it rolls back with it.
  const spend = (trx: Executor) => takeQuota(trx, policy, submission.tokenId, now, RESUBMIT_ADVICE);
  const fresh = (rate: PolicyOutcome) => ({ id: submission.story.id, expiresAt, refreshed: false, rate });
  const pending: PendingStory = {
    id: submission.story.id,
    memberId: submission.memberId,
    tokenId: submission.tokenId,
    story,
    now,
    expiresAt,
  };
  if (highlights.writesNewInOneRoundTrip(deps.db)) {
    const quota = quotaCounter(policy, submission.tokenId, now);
    const count = await highlights.insertNewSpendingQuota(deps, pending, quota);
    if (count !== undefined) return fresh(spentQuota(policy, count, now, RESUBMIT_ADVICE));
  }
  return transact(deps, async (trx) => {
    // Twice at most: a taken id can vanish between the insert and the read (a moderator's decision
    // or the expiry sweep on another connection), and the insert then goes through.
    for (let attempt = 0; attempt < 2; attempt++) {
      const [inserted] = await highlights.insertPending(trx, pending);
      if (inserted) return fresh(await spend(trx));
      const existing = await highlights.holderOf(trx, submission.story.id);
      if (!existing) continue;
      if (existing.member_id !== submission.memberId) {
        throw apiError('story_id_taken', {});
      }
      if (existing.status !== 'pending') {
        throw apiError('already_moderated');
      }
      if (Number(existing.expires_at) > now) {
        await highlights.refreshPending(trx, pending);
        const rate = await peekQuota(trx, policy, submission.tokenId, now);
        return { id: submission.story.id, expiresAt, refreshed: true, rate };
      }
      // An expired, never-moderated story comes back as a new submission under the same id.
      await highlights.resubmit(trx, pending);
      return fresh(await spend(trx));
    }
    throw apiError('story_id_taken', { raced: true });
  });
}

/** pending while in the queue; gone once approved, rejected or expired (the poll cannot tell which). */
export async function highlightStatus(
  deps: Store & Clocked,
  memberId: string,
  id: string,
): Promise<'pending' | 'gone' | undefined> {
  const row = await highlights.statusOf(deps.db, id);
  if (!row || row.member_id !== memberId) return undefined;
  return row.status === 'pending' && Number(row.expires_at) > deps.clock.now() ? 'pending' : 'gone';
}

export function countPending(deps: Store & Clocked, memberId: string): Promise<number> {
  return highlights.countPending(deps.db, memberId, deps.clock.now());
}

/** Newest first by default; the moderation queue reads oldest first (`asc`). */
export function listHighlights(
  deps: Store,
  status: string | undefined,
  page: PageRequest,
  direction: 'asc' | 'desc' = 'desc',
): Promise<Page<HighlightsTable>> {
  return highlights.page(deps.db, status, page, direction);
}

export type Decision = 'approve' | 'reject';

/** Moves a pending story out of the queue: approved stories become active. */
export async function decideHighlight(
  deps: Clocked & WritePort,
  id: string,
  decision: Decision,
  decidedBy: string,
): Promise<'done' | 'not_pending' | 'unknown'> {
  const now = deps.clock.now();
  return transact(deps, async (trx) => {
    const memberId = await highlights.memberOf(trx, id);
    if (memberId === undefined) return 'unknown';
    const status = decision === 'approve' ? 'active' : 'rejected';
    if (!(await highlights.decide(trx, id, { status, by: decidedBy, now }))) return 'not_pending';
    await appendEvent(
      trx,
      memberId,
      {
        type: decision === 'approve' ? 'highlight_approved' : 'highlight_rejected',
        actor: { kind: 'operator', name: decidedBy },
        target: { story_id: id },
        actions: [
          { label: 'Check the story', mcp_tool: 'ic_highlights_status', args: { id }, consequential: false },
        ],
      },
      now,
    );
    return 'done';
  });
}
