import { sql } from 'kysely';
import { arg, numberArg, onPostgres, prepare } from './engine/prepared.ts';
import type { Db, Executor } from './schema.ts';

const hitCounter = prepare((db) =>
  db
    .insertInto('counters')
    .values({ key: arg(0), count: 1, expires_at: numberArg(1) })
    .onConflict((oc) => oc.column('key').doUpdateSet({ count: sql`counters.count + 1` }))
    .returning('count'),
);

// Many windows' hits in one upsert, its transaction (the statement's own: never call it on a
// transaction) committed without waiting for the WAL flush. set_config(..., true) lasts until the end
// of the transaction, which PostgreSQL reads at commit; the WHERE is evaluated once, before the
// arrays are unnested into rows. The rows are upserted in the arrays' order, so callers that sort
// their keys lock them in one order and two batches cannot deadlock.
const hitManyLazily = prepare((db) =>
  db
    .insertInto('counters')
    .columns(['key', 'count', 'expires_at'])
    .expression(
      db
        .selectNoFrom([
          sql<string>`unnest(${arg(0)}::text[])`.as('key'),
          sql<number>`unnest(${arg(1)}::int[])`.as('count'),
          sql<number>`unnest(${arg(2)}::bigint[])`.as('expires_at'),
        ])
        .where(sql<boolean>`set_config('synchronous_commit', 'off', true) = 'off'`),
    )
    .onConflict((oc) => oc.column('key').doUpdateSet({ count: sql`counters.count + excluded.count` }))
    .returning(['key', 'count']),
);

const takeCounter = prepare((db) =>
  db
    .insertInto('counters')
    .values({ key: arg(0), count: 1, expires_at: numberArg(1) })
    .onConflict((oc) =>
      oc
        .column('key')
        .doUpdateSet({ count: sql`counters.count + 1` })
        .where('counters.count', '<', numberArg(2)),
    )
    .returning('count'),
);

const peekCounter = prepare((db) => db.selectFrom('counters').select('count').where('key', '=', arg(0)));

/** A window's count as one store saw it, and when the window ends. */
export interface CountedWindow {
  key: string;
  count: number;
  expiresAt: number;
}

const RAISED_PER_STATEMENT = 5000;

/**
 * Counters live in the database so every instance shares them and a restart resets nothing.
 * Each increment is one atomic upsert; no read-modify-write race can lose or double a hit.
 */
export const counters = {
  async hit(db: Executor, key: string, expiresAt: number): Promise<number> {
    const [row] = await hitCounter(db, key, expiresAt);
    return Number(row.count);
  },

  /**
   * Adds `hits[i]` to window `keys[i]` (sorted, each once) in one statement on PostgreSQL, committed
   * asynchronously (DatabaseWindowCounters says why): each window's count after. Only on the pool:
   * inside a transaction it would make that whole transaction's commit lazy.
   */
  async hitManyCommittedLazily(
    db: Db,
    keys: readonly string[],
    hits: readonly number[],
    expiresAt: readonly number[],
  ): Promise<Map<string, number>> {
    if (db.isTransaction)
      throw new Error('hitManyCommittedLazily runs its own transaction, never inside one');
    const rows = await hitManyLazily(db, keys, hits, expiresAt);
    return new Map(rows.map((row) => [row.key, Number(row.count)]));
  },

  /**
   * Raises each window to at least `count` (a count another store had reached), adding none: the
   * larger of the two stays, whichever is written first. Rows in key order, as hitManyCommittedLazily.
   */
  async raise(db: Executor, windows: readonly CountedWindow[]): Promise<void> {
    const greatest = onPostgres(db)
      ? sql<number>`greatest(counters.count, excluded.count)`
      : sql<number>`max(counters.count, excluded.count)`;
    const sorted = [...windows].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    // Three parameters a row, well under either engine's limit on one statement's.
    for (let i = 0; i < sorted.length; i += RAISED_PER_STATEMENT) {
      const rows = sorted
        .slice(i, i + RAISED_PER_STATEMENT)
        .map((w) => ({ key: w.key, count: w.count, expires_at: w.expiresAt }));
      await db
        .insertInto('counters')
        .values(rows)
        .onConflict((oc) => oc.column('key').doUpdateSet({ count: greatest }))
        .execute();
    }
  },

  /** The windows that end after `from` and by `to`. */
  async endingWithin(db: Executor, from: number, to: number): Promise<CountedWindow[]> {
    const rows = await db
      .selectFrom('counters')
      .select(['key', 'count', 'expires_at'])
      .where('expires_at', '>', from)
      .where('expires_at', '<=', to)
      .execute();
    return rows.map((row) => ({ key: row.key, count: Number(row.count), expiresAt: Number(row.expires_at) }));
  },

  /** Increments only while below the limit; undefined means the limit is reached and nothing changed. */
  async take(db: Executor, key: string, limit: number, expiresAt: number): Promise<number | undefined> {
    const [row] = await takeCounter(db, key, expiresAt, limit);
    return row ? Number(row.count) : undefined;
  },

  async peek(db: Executor, key: string): Promise<number> {
    const [row] = await peekCounter(db, key);
    return row ? Number(row.count) : 0;
  },

  async sweep(db: Executor, now: number): Promise<number> {
    const result = await db.deleteFrom('counters').where('expires_at', '<', now).executeTakeFirst();
    return Number(result.numDeletedRows);
  },
};
