import { sql } from 'kysely';
import { arg, numberArg, prepare } from './engine/prepared.ts';
import type { Executor } from './schema.ts';

// What the operator's landing page counts, kept by the writes that change it (tables activity_days,
// tallies, token_holders; migration 0019 fills them from the rows already there). The page reads
// a few dozen rows here instead of the activity log and the token table.

const MS_PER_DAY = 86_400_000;

/** The UTC day (its number since the epoch) of a time in ms. */
export const dayOf = (at: number): number => Math.floor(at / MS_PER_DAY);

/** The tallies' names. */
export const TALLY = {
  live: 'tokens_live',
  sandbox: 'tokens_sandbox',
  revoked: 'tokens_revoked',
  holders: 'token_holders',
  /** Live tokens whose last use falls on the day: each live token counts on one day at most. */
  lastUsed: (day: number) => `tokens_last_used:${day}`,
} as const;

// Added to by every recorded call, in its transaction: compiled once, and deferred (on PostgreSQL
// it travels with the COMMIT, so the day's row is locked only while the transaction commits).
const countCall = prepare(
  (db) =>
    db
      .insertInto('activity_days')
      .values({
        day: numberArg(0),
        surface: arg(1),
        operation: arg(2),
        calls: 1,
        refusals: numberArg(3),
      })
      .onConflict((oc) =>
        oc.columns(['day', 'surface', 'operation']).doUpdateSet({
          calls: sql`activity_days.calls + 1`,
          refusals: sql`activity_days.refusals + excluded.refusals`,
        }),
      ),
  { deferred: true },
);

const addTally = prepare((db) =>
  db
    .insertInto('tallies')
    .values({ key: arg(0), count: numberArg(1) })
    .onConflict((oc) => oc.column('key').doUpdateSet({ count: sql`tallies.count + excluded.count` })),
);

/** One day, surface and operation's calls. */
export interface DayCount {
  day: number;
  surface: string;
  operation: string;
  calls: number;
  refusals: number;
}

export const activityDays = {
  /** Counts one call (a refusal when its status is 400 or above) in the executor's transaction. */
  async count(
    executor: Executor,
    call: { at: number; surface: string; operation: string; status: number },
  ): Promise<void> {
    await countCall(executor, dayOf(call.at), call.surface, call.operation, call.status >= 400 ? 1 : 0);
  },

  /** Moves a counted call into or out of the refusals (its status was corrected across 400). */
  async recount(
    executor: Executor,
    call: { at: number; surface: string; operation: string },
    refusals: 1 | -1,
  ): Promise<void> {
    await executor
      .updateTable('activity_days')
      .set({ refusals: sql`refusals + ${refusals}` })
      .where('day', '=', dayOf(call.at))
      .where('surface', '=', call.surface)
      .where('operation', '=', call.operation)
      .execute();
  },

  /** Every day, surface and operation's counts from day `since` on: a range of the primary key. */
  async since(executor: Executor, since: number): Promise<DayCount[]> {
    const rows = await activityDays.sinceQuery(executor, since).execute();
    return rows.map((row) => ({
      day: Number(row.day),
      surface: row.surface,
      operation: row.operation,
      calls: Number(row.calls),
      refusals: Number(row.refusals),
    }));
  },

  /** The statement since() runs (tests read its plan). */
  sinceQuery(executor: Executor, since: number) {
    return executor
      .selectFrom('activity_days')
      .select(['day', 'surface', 'operation', 'calls', 'refusals'])
      .where('day', '>=', since)
      .orderBy('day')
      .orderBy('surface')
      .orderBy('operation');
  },
};

export const tallies = {
  /**
   * Adds each delta to its tally in the executor's transaction. Keys are written in sorted order so
   * two transactions moving the same tallies lock them in one order and cannot deadlock.
   */
  async add(executor: Executor, deltas: Record<string, number>): Promise<void> {
    for (const key of Object.keys(deltas).sort()) {
      if (deltas[key] !== 0) await addTally(executor, key, deltas[key]);
    }
  },

  /** The tallies named (zero for one never written): one read of the primary key. */
  async read(executor: Executor, keys: readonly string[]): Promise<Map<string, number>> {
    const rows = await tallies.readQuery(executor, keys).execute();
    const counts = new Map(keys.map((key) => [key, 0]));
    for (const row of rows) counts.set(row.key, Number(row.count));
    return counts;
  },

  /** The statement read() runs (tests read its plan). */
  readQuery(executor: Executor, keys: readonly string[]) {
    return executor
      .selectFrom('tallies')
      .select(['key', 'count'])
      .where('key', 'in', keys.length ? [...keys] : ['']);
  },
};

export const tokenHolders = {
  /** Adds `delta` to the member's live tokens; the count after. Locks the member's row until commit. */
  async change(executor: Executor, memberId: string, delta: 1 | -1): Promise<number> {
    const row = await executor
      .insertInto('token_holders')
      .values({ member_id: memberId, live: delta })
      .onConflict((oc) =>
        oc.column('member_id').doUpdateSet({ live: sql`token_holders.live + excluded.live` }),
      )
      .returning('live')
      .executeTakeFirstOrThrow();
    return Number(row.live);
  },
};
