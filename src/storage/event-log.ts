import { sql } from 'kysely';
import { EVENT_LOG_CHANNEL, noteEmbeddedAppend } from './engine/append-feed.ts';
import { arg, numberArg, onPostgres, prepare, runDeferred } from './engine/prepared.ts';
import type { EventLogTable, Executor } from './schema.ts';

// Each reader's log of what happened to them (tables event_log, and event_log_heads: one counter
// row per reader, from which ids are taken inside the appending transaction).

/** A record as written: actor, target, payload and actions as JSON text. */
export type EventLogRow = EventLogTable;

// Nothing reads its answer (the id comes from the head row), so it is deferred: on PostgreSQL it
// travels with the transaction's next statement (engine/statement-groups.ts).
const insertRecord = prepare(
  (db) =>
    db.insertInto('event_log').values({
      recipient_id: arg(0),
      id: numberArg(1),
      type: arg(2),
      at: numberArg(3),
      actor: arg(4),
      target: arg(5),
      payload: arg(6),
      actions: arg(7),
    }),
  { deferred: true },
);

export const eventLog = {
  /**
   * The reader's next id, taken from their counter row, which the transaction then holds until it
   * commits: ids never skip, and a later id never becomes visible before an earlier one.
   */
  async nextId(trx: Executor, recipientId: string): Promise<number> {
    const head = await trx
      .insertInto('event_log_heads')
      .values({ recipient_id: recipientId, last_id: 1 })
      .onConflict((oc) =>
        oc.column('recipient_id').doUpdateSet({ last_id: sql`event_log_heads.last_id + 1` }),
      )
      .returning('last_id')
      .executeTakeFirstOrThrow();
    return Number(head.last_id);
  },

  /**
   * Writes a record under the id nextId gave, in the same transaction, and tells the reader's
   * waiters once it commits (engine/append-feed.ts): on PostgreSQL a notification that travels
   * with the transaction's next statement and is delivered at its commit to every instance.
   */
  async insert(trx: Executor, row: EventLogRow): Promise<unknown> {
    if (onPostgres(trx))
      await runDeferred(trx, sql`select pg_notify(${EVENT_LOG_CHANNEL}, ${row.recipient_id})`);
    else noteEmbeddedAppend(trx, row.recipient_id);
    return insertRecord(
      trx,
      row.recipient_id,
      row.id,
      row.type,
      row.at,
      row.actor,
      row.target,
      row.payload,
      row.actions,
    );
  },

  /** The reader's latest `limit` records, newest first (the primary key's range, read backwards). */
  latest(executor: Executor, recipientId: string, limit: number): Promise<EventLogRow[]> {
    return executor
      .selectFrom('event_log')
      .selectAll()
      .where('recipient_id', '=', recipientId)
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
  },

  /**
   * Up to `limit` records after id `since`, by id; only of `types` when given (none: no record), and
   * none past id `upTo` when given.
   */
  after(
    executor: Executor,
    recipientId: string,
    since: number,
    limit: number,
    types?: readonly string[],
    upTo?: number,
  ): Promise<EventLogRow[]> {
    let select = executor
      .selectFrom('event_log')
      .selectAll()
      .where('recipient_id', '=', recipientId)
      .where('id', '>', since)
      .orderBy('id')
      .limit(limit);
    if (types) select = select.where('type', 'in', types.length ? [...types] : ['']);
    if (upTo !== undefined) select = select.where('id', '<=', upTo);
    return select.execute();
  },

  /** The id of the reader's oldest kept record (the retention sweep deletes from the oldest); undefined: none kept. */
  async oldestId(executor: Executor, recipientId: string): Promise<number | undefined> {
    const row = await executor
      .selectFrom('event_log')
      .select((eb) => eb.fn.min('id').as('oldest'))
      .where('recipient_id', '=', recipientId)
      .executeTakeFirst();
    return row?.oldest === null || row?.oldest === undefined ? undefined : Number(row.oldest);
  },

  /** The id of the reader's latest record (0: none yet). Its records up to it are all committed. */
  async lastId(executor: Executor, recipientId: string): Promise<number> {
    const head = await executor
      .selectFrom('event_log_heads')
      .select('last_id')
      .where('recipient_id', '=', recipientId)
      .executeTakeFirst();
    return head ? Number(head.last_id) : 0;
  },
};
