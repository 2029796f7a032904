import { sql } from 'kysely';
import { arg, numberArg, prepare } from './engine/prepared.ts';
import type { ActivityTable, Executor } from './schema.ts';

// The calls members' tokens and sessions made (table activity). Ids start with the call's time in
// base 36, fixed width: newest first is an index scan, and a range of ids is a range of time.

const MS_PER_DAY = 86_400_000;

/** The id prefix of a call at `at` (epoch ms): its time in base 36, ten characters. */
export function activityIdPrefix(at: number): string {
  return at.toString(36).padStart(10, '0');
}

/** One call's row, as the pipeline records it. */
export interface ActivityRow {
  memberId: string;
  operation: string;
  surface: string;
  tokenPrefix: string;
  status: number;
  outcome: string;
  at: number;
  /** What the call touched (`event:<url>`, `booking:<id>`, `highlight:<id>`), when it touched one. */
  target?: string;
}

/** Which of a member's calls a page of their activity shows. */
export interface ActivityQuery {
  /** Only this token's calls (its display prefix). */
  tokenPrefix?: string;
  /** Only reads (`read`: operations not in `writes`), writes, refused calls (status 400 and above) or sandbox calls. */
  kind?: 'read' | 'write' | 'refused' | 'sandbox';
  /** The operation ids that write (the registry decides). */
  writes: readonly string[];
  /** Rows older than this id (the cursor: the last id of the page before). */
  before?: string;
  limit: number;
}

// Written by every agent call: compiled once, and deferred: nothing waits for its answer, so on
// PostgreSQL it travels with the COMMIT (engine/statement-groups.ts).
const insertRow = prepare(
  (db) =>
    db.insertInto('activity').values({
      id: arg(0),
      member_id: arg(1),
      at: numberArg(2),
      operation: arg(3),
      surface: arg(4),
      token_prefix: arg(5),
      status: numberArg(6),
      outcome: arg(7),
      target: arg(8),
    }),
  { deferred: true },
);

// Read on every activity call of every surface: compiled once.
const recentRows = prepare((db) =>
  db
    .selectFrom('activity')
    .selectAll()
    .where('member_id', '=', arg(0))
    .orderBy('id', 'desc')
    .limit(numberArg(1)),
);

/** A literal, not a parameter: PostgreSQL must see the same expression in SELECT and GROUP BY. */
const DAY = sql.lit(MS_PER_DAY);

export const activity = {
  /** Writes one call's row in the executor given (the operation's own transaction, to commit together). */
  insert(executor: Executor, id: string, row: ActivityRow): Promise<unknown> {
    return insertRow(
      executor,
      id,
      row.memberId,
      row.at,
      row.operation,
      row.surface,
      row.tokenPrefix,
      row.status,
      row.outcome,
      row.target ?? null,
    );
  },

  /** A written row's status and outcome (and what it touched, once the answer named it), corrected. */
  async correct(
    executor: Executor,
    id: string,
    outcome: { status: number; outcome: string; target?: string },
  ): Promise<void> {
    await executor
      .updateTable('activity')
      .set({
        status: outcome.status,
        outcome: outcome.outcome,
        ...(outcome.target === undefined ? {} : { target: outcome.target }),
      })
      .where('id', '=', id)
      .execute();
  },

  /** A member's latest calls, newest first. */
  recent(executor: Executor, memberId: string, limit: number): Promise<ActivityTable[]> {
    return recentRows(executor, memberId, limit);
  },

  /**
   * One page of a member's calls, newest first, keyed on the id (which sorts by time): a range of
   * the index (member_id, id), or (member_id, token_prefix, id) for one agent's calls, whatever page.
   */
  page(executor: Executor, memberId: string, query: ActivityQuery): Promise<ActivityTable[]> {
    return activity.pageQuery(executor, memberId, query).execute();
  },

  /** The statement page() runs (tests read its plan). */
  pageQuery(executor: Executor, memberId: string, query: ActivityQuery) {
    let select = executor.selectFrom('activity').selectAll().where('member_id', '=', memberId);
    if (query.tokenPrefix !== undefined) select = select.where('token_prefix', '=', query.tokenPrefix);
    if (query.before !== undefined) select = select.where('id', '<', query.before);
    const writes = query.writes.length ? [...query.writes] : [''];
    if (query.kind === 'refused') select = select.where('status', '>=', 400);
    else if (query.kind === 'sandbox') select = select.where('outcome', '=', 'sandbox');
    else if (query.kind === 'write') select = select.where('operation', 'in', writes);
    else if (query.kind === 'read') select = select.where('operation', 'not in', writes);
    return select.orderBy('id', 'desc').limit(query.limit);
  },

  /**
   * Calls and refusals (status 400 and above) per UTC day (its number since the epoch) and surface,
   * since `since`, counted over the log: the reference the daily rollup (rollups.ts) is checked
   * against. No page reads it.
   */
  async byDay(
    executor: Executor,
    since: number,
  ): Promise<{ day: number; surface: string; requests: number; refusals: number }[]> {
    const rows = await executor
      .selectFrom('activity')
      .select([
        sql<number>`at / ${DAY}`.as('day'),
        'surface',
        sql<number>`count(*)`.as('requests'),
        sql<number>`sum(case when status >= 400 then 1 else 0 end)`.as('refusals'),
      ])
      .where('id', '>=', activityIdPrefix(since))
      .groupBy([sql`at / ${DAY}`, 'surface'])
      .execute();
    return rows.map((row) => ({
      day: Math.floor(Number(row.day)),
      surface: row.surface,
      requests: Number(row.requests),
      refusals: Number(row.refusals),
    }));
  },

  /** The operations called most since `since`, with their refusals; ties by name (a recount, as byDay). */
  async busiest(
    executor: Executor,
    since: number,
    limit: number,
  ): Promise<{ operation: string; calls: number; refusals: number }[]> {
    const rows = await executor
      .selectFrom('activity')
      .select([
        'operation',
        sql<number>`count(*)`.as('calls'),
        sql<number>`sum(case when status >= 400 then 1 else 0 end)`.as('refusals'),
      ])
      .where('id', '>=', activityIdPrefix(since))
      .groupBy('operation')
      .orderBy(sql`count(*)`, 'desc')
      .orderBy('operation')
      .limit(limit)
      .execute();
    return rows.map((row) => ({
      operation: row.operation,
      calls: Number(row.calls),
      refusals: Number(row.refusals),
    }));
  },
};
