import { sql } from 'kysely';
import { MS } from '../../clock.ts';
import { ApiError } from '../../core/errors.ts';
import { peekQuota, quotaCounter, spentQuota, takeQuota } from '../../core/quota.ts';
import type { PolicyOutcome, RatePolicy } from '../../core/rate-limit.ts';
import { arg, numberArg, onPostgres, prepare, prepareAnsweredLater } from '../../storage/engine/prepared.ts';
import { isRefusedWrite, orRefuse } from '../../storage/engine/refusals.ts';
import { type Page, type PageRequest, pageOf } from '../../storage/paging.ts';
import type { Executor, HighlightsTable } from '../../storage/schema.ts';
import { transact, transactAnsweredAtCommit, type WritePort } from '../../storage/transactions.ts';
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

const existingStory = prepare((db) =>
  db.selectFrom('highlights').select(['member_id', 'status', 'expires_at']).where('id', '=', arg(0)),
);

/** A new pending story's row, from a prepared insert's arguments 0 to 5 (in the order of `values` in submitHighlight). */
const NEW_STORY = {
  id: arg(0),
  member_id: arg(1),
  token_id: arg(2),
  story: arg(3),
  status: 'pending',
  submitted_at: numberArg(4),
  updated_at: numberArg(4),
  expires_at: numberArg(5),
  decided_at: null,
  decided_by: null,
} as const;

const insertStory = prepare((db) =>
  db
    .insertInto('highlights')
    .values(NEW_STORY)
    // A new id (the common case) is written in this one statement; a taken one answers no row and
    // is then read. (On PostgreSQL the usual submission goes as insertNewStorySpendingQuota first.)
    .onConflict((conflict) => conflict.column('id').doNothing())
    .returning('id'),
);

/**
 * On PostgreSQL the usual submission (a new id, quota left) is one statement sent with its COMMIT:
 * one round trip for the story, the daily quota it spends and the call's activity row. The quota's
 * row is written only when the story was, and only below the limit; where either is not so (the id
 * is taken, or the quota is spent) the statement refuses, nothing of its transaction is kept, and
 * the submission is written again the general way, which tells the cases apart.
 */
const insertNewStorySpendingQuota = prepareAnsweredLater((db) =>
  db
    .with('story', (query) =>
      query
        .insertInto('highlights')
        .values(NEW_STORY)
        .onConflict((conflict) => conflict.column('id').doNothing())
        .returning('id'),
    )
    // counters.take's upsert (src/storage/counters.ts), fed by the story's RETURNING.
    .with('spent', (query) =>
      query
        .insertInto('counters')
        .columns(['key', 'count', 'expires_at'])
        .expression(
          query
            .selectFrom('story')
            .select([
              sql<string>`${arg(6)}::text`.as('key'),
              sql<number>`1`.as('count'),
              sql<number>`${arg(7)}::bigint`.as('expires_at'),
            ]),
        )
        .onConflict((conflict) =>
          conflict
            .column('key')
            .doUpdateSet({ count: sql`counters.count + 1` })
            .where('counters.count', '<', numberArg(8)),
        )
        .returning('count'),
    )
    .selectNoFrom(
      orRefuse(sql<number | null>`(select count from spent)`, 'highlight id taken or quota spent').as(
        'count',
      ),
    ),
);

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
  const values = [submission.story.id, submission.memberId, submission.tokenId, story, now, expiresAt];
  if (onPostgres(deps.db)) {
    const quota = quotaCounter(policy, submission.tokenId, now);
    try {
      const rows = await transactAnsweredAtCommit(deps, (trx) =>
        insertNewStorySpendingQuota(trx, ...values, quota.key, quota.expiresAt, quota.limit),
      );
      if (rows) return fresh(spentQuota(policy, rows[0].count, now, RESUBMIT_ADVICE));
    } catch (error) {
      if (!isRefusedWrite(error)) throw error;
    }
  }
  return transact(deps, async (trx) => {
    // Twice at most: a taken id can vanish between the insert and the read (a moderator's decision
    // or the expiry sweep on another connection), and the insert then goes through.
    for (let attempt = 0; attempt < 2; attempt++) {
      const [inserted] = await insertStory(trx, ...values);
      if (inserted) return fresh(await spend(trx));
      const [existing] = await existingStory(trx, submission.story.id);
      if (!existing) continue;
      if (existing.member_id !== submission.memberId) {
        throw new ApiError(409, 'story_id_taken', 'conflict', {
          message: 'Another member already submitted a story with this id; use a slug of your own.',
        });
      }
      if (existing.status !== 'pending') {
        throw new ApiError(409, 'already_moderated', 'conflict', {
          message: 'This story was already moderated; submit it under a new id.',
        });
      }
      if (Number(existing.expires_at) > now) {
        await trx
          .updateTable('highlights')
          .set({ story, token_id: submission.tokenId, updated_at: now, expires_at: expiresAt })
          .where('id', '=', submission.story.id)
          .execute();
        const rate = await peekQuota(trx, policy, submission.tokenId, now);
        return { id: submission.story.id, expiresAt, refreshed: true, rate };
      }
      // An expired, never-moderated story comes back as a new submission under the same id.
      await trx
        .updateTable('highlights')
        .set({
          story,
          token_id: submission.tokenId,
          submitted_at: now,
          updated_at: now,
          expires_at: expiresAt,
          decided_at: null,
          decided_by: null,
        })
        .where('id', '=', submission.story.id)
        .execute();
      return fresh(await spend(trx));
    }
    throw new ApiError(409, 'story_id_taken', 'conflict', {
      message: 'This story id changed hands while it was being submitted; send it again.',
    });
  });
}

/** pending while in the queue; gone once approved, rejected or expired (the poll cannot tell which). */
export async function highlightStatus(
  deps: Store & Clocked,
  memberId: string,
  id: string,
): Promise<'pending' | 'gone' | undefined> {
  const row = await deps.db
    .selectFrom('highlights')
    .select(['status', 'expires_at', 'member_id'])
    .where('id', '=', id)
    .executeTakeFirst();
  if (!row || row.member_id !== memberId) return undefined;
  return row.status === 'pending' && Number(row.expires_at) > deps.clock.now() ? 'pending' : 'gone';
}

export async function countPending(deps: Store & Clocked, memberId: string): Promise<number> {
  const row = await deps.db
    .selectFrom('highlights')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('member_id', '=', memberId)
    .where('status', '=', 'pending')
    .where('expires_at', '>', deps.clock.now())
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Newest first by default; the moderation queue reads oldest first (`asc`). */
export function listHighlights(
  deps: Store,
  status: string | undefined,
  page: PageRequest,
  direction: 'asc' | 'desc' = 'desc',
): Promise<Page<HighlightsTable>> {
  let query = deps.db.selectFrom('highlights').selectAll();
  if (status) query = query.where('status', '=', status);
  return pageOf(query, { time: 'submitted_at', id: 'id', direction }, page);
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
    const story = await trx
      .selectFrom('highlights')
      .select(['member_id'])
      .where('id', '=', id)
      .executeTakeFirst();
    if (!story) return 'unknown';
    const result = await trx
      .updateTable('highlights')
      .set({
        status: decision === 'approve' ? 'active' : 'rejected',
        decided_at: now,
        decided_by: decidedBy,
        updated_at: now,
      })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .where('expires_at', '>', now)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) return 'not_pending';
    await appendEvent(
      trx,
      story.member_id,
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
