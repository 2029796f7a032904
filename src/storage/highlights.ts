import { sql } from 'kysely';
import { arg, numberArg, onPostgres, prepare, prepareAnsweredLater } from './engine/prepared.ts';
import { isRefusedWrite, orRefuse } from './engine/refusals.ts';
import { type Page, type PageRequest, pageOf } from './paging.ts';
import type { Executor, HighlightsTable } from './schema.ts';
import { transactAnsweredAtCommit, type WritePort } from './transactions.ts';

// The stories members submit for moderation (table highlights). Every function takes the
// executor it is handed: the database, or the transaction the caller's rule runs in.

/** A story as submitted: what a new or a resubmitted pending row is written from. */
export interface PendingStory {
  id: string;
  memberId: string;
  tokenId: string;
  /** The story, as JSON text. */
  story: string;
  now: number;
  expiresAt: number;
}

/** The daily quota's counter row a new story spends (see counters.take). */
export interface QuotaSpend {
  key: string;
  expiresAt: number;
  limit: number;
}

/** A new pending story's row, from a prepared insert's arguments 0 to 5 (PendingStory's order). */
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
    // A new id (the common case) is written in this one statement; a taken one answers no row.
    .onConflict((conflict) => conflict.column('id').doNothing())
    .returning('id'),
);

/**
 * PostgreSQL: the story and the quota it spends in one statement sent with its COMMIT. The quota's
 * row is written only when the story was, and only below the limit; where either is not so the
 * statement refuses (engine/refusals.ts) and nothing of its transaction is kept.
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

const storyHolder = prepare((db) =>
  db.selectFrom('highlights').select(['member_id', 'status', 'expires_at']).where('id', '=', arg(0)),
);

export const highlights = {
  /** Whether insertNewSpendingQuota can be tried on this database (PostgreSQL); decided at once. */
  writesNewInOneRoundTrip(executor: Executor): boolean {
    return onPostgres(executor);
  },

  /**
   * A new story and the quota it spends, in one write unit that costs one round trip (only where
   * writesNewInOneRoundTrip): the count the quota row reached. Undefined where it cannot say
   * (inside a transaction already open, the id taken or the quota spent): nothing was written, and
   * the caller writes the general way, which tells those cases apart.
   */
  async insertNewSpendingQuota(
    port: WritePort,
    story: PendingStory,
    quota: QuotaSpend,
  ): Promise<number | undefined> {
    try {
      const rows = await transactAnsweredAtCommit(port, (trx) =>
        insertNewStorySpendingQuota(
          trx,
          story.id,
          story.memberId,
          story.tokenId,
          story.story,
          story.now,
          story.expiresAt,
          quota.key,
          quota.expiresAt,
          quota.limit,
        ),
      );
      return rows?.[0].count;
    } catch (error) {
      if (isRefusedWrite(error)) return undefined;
      throw error;
    }
  },

  /**
   * Writes a new pending story: its row, or none where its id is taken. The prepared statement's
   * own promise, so the write path takes no extra turn.
   */
  insertPending(executor: Executor, story: PendingStory): Promise<{ id: string }[]> {
    return insertStory(
      executor,
      story.id,
      story.memberId,
      story.tokenId,
      story.story,
      story.now,
      story.expiresAt,
    );
  },

  /** Who holds a story id, its status and its expiry. */
  async holderOf(
    executor: Executor,
    id: string,
  ): Promise<{ member_id: string; status: string; expires_at: number } | undefined> {
    const [row] = await storyHolder(executor, id);
    return row;
  },

  /** A pending story's new text and expiry; its submission time stays. */
  async refreshPending(executor: Executor, story: PendingStory): Promise<void> {
    await executor
      .updateTable('highlights')
      .set({
        story: story.story,
        token_id: story.tokenId,
        updated_at: story.now,
        expires_at: story.expiresAt,
      })
      .where('id', '=', story.id)
      .execute();
  },

  /** An expired, never-moderated story written again as a new submission under its id. */
  async resubmit(executor: Executor, story: PendingStory): Promise<void> {
    await executor
      .updateTable('highlights')
      .set({
        story: story.story,
        token_id: story.tokenId,
        submitted_at: story.now,
        updated_at: story.now,
        expires_at: story.expiresAt,
        decided_at: null,
        decided_by: null,
      })
      .where('id', '=', story.id)
      .execute();
  },

  /** A story's holder, status and expiry (the member's status poll). */
  statusOf(
    executor: Executor,
    id: string,
  ): Promise<{ status: string; expires_at: number; member_id: string } | undefined> {
    return executor
      .selectFrom('highlights')
      .select(['status', 'expires_at', 'member_id'])
      .where('id', '=', id)
      .executeTakeFirst();
  },

  /** How many of a member's stories wait for a moderator at `now`. */
  async countPending(executor: Executor, memberId: string, now: number): Promise<number> {
    const row = await executor
      .selectFrom('highlights')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('member_id', '=', memberId)
      .where('status', '=', 'pending')
      .where('expires_at', '>', now)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  /** One page of stories (of one status, or all) by submission time. */
  page(
    executor: Executor,
    status: string | undefined,
    page: PageRequest,
    direction: 'asc' | 'desc',
  ): Promise<Page<HighlightsTable>> {
    let query = executor.selectFrom('highlights').selectAll();
    if (status) query = query.where('status', '=', status);
    return pageOf(query, { time: 'submitted_at', id: 'id', direction }, page);
  },

  /** One page of approved stories, most recently approved first. */
  pageApproved(
    executor: Executor,
    page: PageRequest,
  ): Promise<Page<Pick<HighlightsTable, 'id' | 'story' | 'submitted_at' | 'decided_at'>>> {
    const query = executor
      .selectFrom('highlights')
      .select(['id', 'story', 'submitted_at', 'decided_at'])
      .where('status', '=', 'active')
      // Every decided story has its time; the index of decided stories holds only those.
      .where('decided_at', 'is not', null);
    return pageOf(query, { time: 'decided_at', id: 'id', direction: 'desc' }, page);
  },

  /** The member who submitted a story. */
  async memberOf(executor: Executor, id: string): Promise<string | undefined> {
    const row = await executor
      .selectFrom('highlights')
      .select(['member_id'])
      .where('id', '=', id)
      .executeTakeFirst();
    return row?.member_id;
  },

  /** Ends a story's moderation if it is still pending at `now`: whether it was. */
  async decide(
    executor: Executor,
    id: string,
    decision: { status: 'active' | 'rejected'; by: string; now: number },
  ): Promise<boolean> {
    const result = await executor
      .updateTable('highlights')
      .set({
        status: decision.status,
        decided_at: decision.now,
        decided_by: decision.by,
        updated_at: decision.now,
      })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .where('expires_at', '>', decision.now)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  },

  /** The operator's view of one story after a decision. */
  operatorView(
    executor: Executor,
    id: string,
  ): Promise<{ id: string; member_id: string; status: string } | undefined> {
    return executor
      .selectFrom('highlights')
      .select(['id', 'member_id', 'status'])
      .where('id', '=', id)
      .executeTakeFirst();
  },
};
