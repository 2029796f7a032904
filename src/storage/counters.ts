import { sql } from 'kysely';
import { arg, numberArg, prepare } from './prepared.ts';
import type { Db, Executor } from './schema.ts';

const hitCounter = prepare((db) =>
  db
    .insertInto('counters')
    .values({ key: arg(0), count: 1, expires_at: numberArg(1) })
    .onConflict((oc) => oc.column('key').doUpdateSet({ count: sql`counters.count + 1` }))
    .returning('count'),
);

// The same upsert, its transaction (the statement's own: never call it on a transaction) committed
// without waiting for the WAL flush. set_config(..., true) lasts until the end of the transaction,
// which PostgreSQL reads at commit; the row source makes the planner evaluate it once, first.
const hitCounterLazily = prepare((db) =>
  db
    .insertInto('counters')
    .columns(['key', 'count', 'expires_at'])
    .expression(
      db
        .selectNoFrom([
          sql<string>`${arg(0)}::text`.as('key'),
          sql<number>`1`.as('count'),
          sql<number>`${arg(1)}::bigint`.as('expires_at'),
        ])
        .where(sql<boolean>`set_config('synchronous_commit', 'off', true) = 'off'`),
    )
    .onConflict((oc) => oc.column('key').doUpdateSet({ count: sql`counters.count + 1` }))
    .returning('count'),
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
   * `hit` for a short window on PostgreSQL, committed asynchronously (DatabaseWindowCounters says
   * why). Only on the pool: inside a transaction it would make that whole transaction's commit lazy.
   */
  async hitCommittedLazily(db: Db, key: string, expiresAt: number): Promise<number> {
    if (db.isTransaction) throw new Error('hitCommittedLazily runs its own transaction, never inside one');
    const [row] = await hitCounterLazily(db, key, expiresAt);
    return Number(row.count);
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
