// PostgreSQL: a transaction's statements travel in groups (src/storage/engine/statement-groups.ts). BEGIN goes
// with the first statement and a deferred write with the statement after it, so a transaction of
// one statement and one deferred write costs two round trips, still all or nothing. Round trips are
// counted as the server's ReadyForQuery messages on the pooled connection; every case also reads
// what was stored.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { namingPool } from '../src/storage/engine/named-statements.ts';
import { arg, prepareAnsweredLater, runDeferred } from '../src/storage/engine/prepared.ts';
import type { Db } from '../src/storage/schema.ts';
import { engines, freshDatabase, type TestDatabase, testPool } from './support/databases.ts';

const postgres = engines.find((engine) => engine.name === 'postgres')!;

interface Tables {
  items: { id: number; note: string };
}

describe('statement groups (postgres)', { skip: postgres.skip }, () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  let db: Kysely<Tables>;
  let roundTrips = 0;
  const connectionsOpened: number[] = [];

  const deferredInsert = (id: number, note: string) =>
    sql`insert into items (id, note) values (${id}, ${note})`;
  /** Answers its row with a computed integer column: the rows are parsed as any answer's are. */
  const answeredInsert = prepareAnsweredLater((schemaDb) => ({
    compile: () =>
      sql<{ id: number; note: string; tenfold: number }>`insert into items (id, note)
        values (${arg(0)}::int, ${arg(1)}) returning id, note, id * 10 as tenfold`.compile(schemaDb),
  }));
  const answered = (trx: Kysely<Tables>, id: number, note: string) =>
    answeredInsert(trx as unknown as Db, id, note);
  const stored = async () =>
    (await db.selectFrom('items').select(['id', 'note']).orderBy('id').execute()).map((row) => [
      row.id,
      row.note,
    ]);
  const counted = async <T>(
    work: () => Promise<T>,
  ): Promise<{ value?: T; error?: unknown; trips: number }> => {
    const start = roundTrips;
    try {
      const value = await work();
      return { value, trips: roundTrips - start };
    } catch (error) {
      return { error, trips: roundTrips - start };
    }
  };

  before(async () => {
    database = await freshDatabase('postgres');
    // One connection, so every case runs on the connection the previous one left behind.
    pool = testPool(database.url, 1);
    pool.on('connect', (client) => {
      const connection = (client as unknown as { connection: NodeJS.EventEmitter }).connection;
      connection.on('readyForQuery', () => roundTrips++);
      connectionsOpened.push((client as unknown as { processID: number }).processID);
    });
    db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool: namingPool(pool, pg) }) });
    await sql`create table items (id int primary key, note text not null)`.execute(db);
  });
  beforeEach(async () => {
    await sql`truncate items`.execute(db);
  });
  after(async () => {
    await db?.destroy();
    await database?.drop();
  });

  test('BEGIN travels with the first statement and a deferred write with the COMMIT: two round trips', async () => {
    const run = await counted(() =>
      db.transaction().execute(async (trx) => {
        const [row] = await trx
          .insertInto('items')
          .values({ id: 1, note: 'first' })
          .returning('id')
          .execute();
        await runDeferred(trx, deferredInsert(2, 'deferred'));
        return row.id;
      }),
    );
    assert.equal(run.error, undefined);
    assert.equal(run.value, 1, 'the first statement answers its own rows');
    assert.equal(run.trips, 2);
    assert.deepEqual(await stored(), [
      [1, 'first'],
      [2, 'deferred'],
    ]);
  });

  test('a deferred write that fails fails the COMMIT with its error, and nothing of the transaction stays', async () => {
    await db.insertInto('items').values({ id: 5, note: 'there before' }).execute();
    const opened = connectionsOpened.length;
    const run = await counted(() =>
      db.transaction().execute(async (trx) => {
        await trx.insertInto('items').values({ id: 6, note: 'rolled back' }).execute();
        await runDeferred(trx, deferredInsert(5, 'duplicate'));
      }),
    );
    assert.equal((run.error as { code?: string }).code, '23505', String(run.error));
    assert.deepEqual(await stored(), [[5, 'there before']]);
    assert.equal(connectionsOpened.length, opened, 'the connection goes on');
    // Its named statements (the deferred insert's among them) still run on it.
    await db.transaction().execute(async (trx) => {
      await trx.insertInto('items').values({ id: 7, note: 'after' }).execute();
      await runDeferred(trx, deferredInsert(8, 'deferred after'));
    });
    assert.deepEqual(await stored(), [
      [5, 'there before'],
      [7, 'after'],
      [8, 'deferred after'],
    ]);
  });

  test('each Parse confirmed in a group is credited to its own statement, and one never confirmed is parsed again', async () => {
    // A deferred write parsed for the first time travels with a statement whose Parse fails (its
    // table is not there yet): pg alone would note the failing statement as parsed when the
    // deferred write's Parse completes, and its next use would bind a statement the server never had.
    const note = (trx: Kysely<Tables>) =>
      runDeferred(trx, sql`insert into items (note, id) values (${'first parse here'}, ${20})`);
    const read = (trx: Kysely<Tables>) =>
      sql<{ note: string }>`select note from parsed_later where id = ${1}`.execute(trx);
    const opened = connectionsOpened.length;
    const early = await counted(() =>
      db.transaction().execute(async (trx) => {
        await note(trx);
        return read(trx);
      }),
    );
    assert.equal((early.error as { code?: string }).code, '42P01', String(early.error));
    assert.equal(early.trips, 2, 'BEGIN, the deferred write and the read together, then ROLLBACK');
    await sql`create table parsed_later (id int primary key, note text not null)`.execute(db);
    await sql`insert into parsed_later values (1, 'there now')`.execute(db);
    const later = await db.transaction().execute(async (trx) => {
      await note(trx);
      return read(trx);
    });
    assert.deepEqual(later.rows, [{ note: 'there now' }]);
    assert.deepEqual(await stored(), [[20, 'first parse here']]);
    assert.equal(connectionsOpened.length, opened, 'all on the one connection');
  });

  test('a SAVEPOINT travels with the next statement and a deferred write with its RELEASE; ROLLBACK TO undoes one unit', async () => {
    await db.insertInto('items').values({ id: 30, note: 'there before' }).execute();
    const unit = (trx: Kysely<Tables>, id: number, deferredId: number) => async () => {
      await sql`savepoint write_unit`.execute(trx);
      try {
        await trx
          .insertInto('items')
          .values({ id, note: `unit ${id}` })
          .execute();
        await runDeferred(trx, deferredInsert(deferredId, `deferred of ${id}`));
        await sql`release write_unit`.execute(trx);
        return 'kept';
      } catch (error) {
        await sql`rollback to write_unit`.execute(trx);
        await sql`release write_unit`.execute(trx);
        return (error as { code?: string }).code;
      }
    };
    const steps: { outcome?: string; trips: number }[] = [];
    const run = await counted(() =>
      db.transaction().execute(async (trx) => {
        for (const [id, deferredId] of [
          [31, 32],
          [33, 30],
          [34, 35],
        ]) {
          const step = await counted(unit(trx, id, deferredId));
          steps.push({ outcome: step.value, trips: step.trips });
        }
      }),
    );
    assert.equal(run.error, undefined);
    assert.deepEqual(steps, [
      { outcome: 'kept', trips: 2 },
      // The failing deferred write fails its RELEASE; ROLLBACK TO and RELEASE go one by one.
      { outcome: '23505', trips: 4 },
      { outcome: 'kept', trips: 2 },
    ]);
    assert.equal(run.trips, 9, 'the units, then COMMIT alone');
    assert.deepEqual(await stored(), [
      [30, 'there before'],
      [31, 'unit 31'],
      [32, 'deferred of 31'],
      [34, 'unit 34'],
      [35, 'deferred of 34'],
    ]);
  });

  test('a first statement that fails to parse leaves no transaction open, and the next one works', async () => {
    const run = await counted(() =>
      db.transaction().execute(async (trx) => {
        await sql`insert into items (id, no_such_column) values (${8}, ${'x'})`.execute(trx);
      }),
    );
    assert.equal((run.error as { code?: string }).code, '42703', String(run.error));
    const inserted = await db.transaction().execute(async (trx) => {
      await trx.insertInto('items').values({ id: 9, note: 'next' }).execute();
      return sql<{ open: boolean }>`select now() = statement_timestamp() as open`.execute(trx);
    });
    assert.equal(inserted.rows[0].open, false, 'the statements after BEGIN share its transaction');
    assert.deepEqual(await stored(), [[9, 'next']]);
  });

  test('a statement refused at its first parse (its table not there yet) is prepared once it can be', async () => {
    const read = (trx: Kysely<Tables>) =>
      sql<{ note: string }>`select note from later_items where id = ${1}`.execute(trx);
    const early = await counted(() => db.transaction().execute(read));
    assert.equal((early.error as { code?: string }).code, '42P01', String(early.error));
    await sql`create table later_items (id int primary key, note text not null)`.execute(db);
    await sql`insert into later_items values (1, 'now there')`.execute(db);
    const later = await db.transaction().execute(read);
    assert.deepEqual(later.rows, [{ note: 'now there' }]);
  });

  test('a transaction ended before any statement sends nothing; a rollback drops its held writes', async () => {
    const empty = await counted(() => db.transaction().execute(async () => 'nothing'));
    assert.equal(empty.value, 'nothing');
    assert.equal(empty.trips, 0);
    const thrown = await counted(() =>
      db.transaction().execute(async (trx) => {
        await runDeferred(trx, deferredInsert(10, 'never sent'));
        throw new Error('changed my mind');
      }),
    );
    assert.equal((thrown.error as Error).message, 'changed my mind');
    assert.equal(thrown.trips, 0);
    const rolledBack = await counted(() =>
      db.transaction().execute(async (trx) => {
        await trx.insertInto('items').values({ id: 11, note: 'rolled back' }).execute();
        await runDeferred(trx, deferredInsert(12, 'dropped'));
        throw new Error('changed my mind later');
      }),
    );
    assert.equal((rolledBack.error as Error).message, 'changed my mind later');
    assert.equal(rolledBack.trips, 2, 'BEGIN with the insert, then ROLLBACK alone');
    assert.deepEqual(await stored(), []);
  });

  test('a statement without parameters after a held BEGIN runs inside the transaction', async () => {
    const run = await counted(() =>
      db.transaction().execute(async (trx) => {
        await sql`insert into items (id, note) values (13, 'no parameters')`.execute(trx);
        throw new Error('roll it back');
      }),
    );
    assert.equal((run.error as Error).message, 'roll it back');
    assert.deepEqual(await stored(), []);
    await db.transaction().execute(async (trx) => {
      await sql`insert into items (id, note) values (14, 'kept')`.execute(trx);
    });
    assert.deepEqual(await stored(), [[14, 'kept']]);
  });

  test('a deferred write outside a transaction runs at once', async () => {
    const run = await counted(() => deferredInsert(15, 'alone').execute(db));
    assert.equal(run.error, undefined);
    assert.equal(run.trips, 1);
    assert.deepEqual(await stored(), [[15, 'alone']]);
  });

  test('a statement answered later travels with the COMMIT: one round trip, its rows once committed', async () => {
    let answers: { rows: Promise<unknown[]> }[] = [];
    const run = await counted(() =>
      db.transaction().execute(async (trx) => {
        answers = [await answered(trx, 40, 'answered'), undefined as never];
        await runDeferred(trx, deferredInsert(41, 'deferred'));
        answers[1] = await answered(trx, 42, 'answered too');
      }),
    );
    assert.equal(run.error, undefined);
    assert.equal(run.trips, 1, 'BEGIN, two answered later, a deferred write and COMMIT');
    assert.deepEqual(await answers[0].rows, [{ id: 40, note: 'answered', tenfold: 400 }]);
    assert.deepEqual(await answers[1].rows, [{ id: 42, note: 'answered too', tenfold: 420 }]);
    assert.deepEqual(await stored(), [
      [40, 'answered'],
      [41, 'deferred'],
      [42, 'answered too'],
    ]);
  });

  test('a statement answered later that fails fails the COMMIT: its rows are that error, nothing stays', async () => {
    await db.insertInto('items').values({ id: 50, note: 'there before' }).execute();
    const opened = connectionsOpened.length;
    let answer: { rows: Promise<unknown[]> } | undefined;
    const run = await counted(() =>
      db.transaction().execute(async (trx) => {
        answer = await answered(trx, 50, 'duplicate');
        await runDeferred(trx, deferredInsert(51, 'rolled back'));
      }),
    );
    assert.equal((run.error as { code?: string }).code, '23505', String(run.error));
    await assert.rejects(answer!.rows, (error: { code?: string }) => error.code === '23505');
    assert.equal(run.trips, 2, 'the group, then ROLLBACK');
    assert.deepEqual(await stored(), [[50, 'there before']]);
    assert.equal(connectionsOpened.length, opened, 'the connection goes on');
    const next = await counted(() => db.transaction().execute((trx) => answered(trx, 52, 'after')));
    assert.deepEqual(await next.value!.rows, [{ id: 52, note: 'after', tenfold: 520 }]);
    assert.equal(next.trips, 1);
  });

  test('a statement answered later goes with its RELEASE; one rolled back unsent answers an error', async () => {
    let kept: { rows: Promise<unknown[]> } | undefined;
    let undone: { rows: Promise<unknown[]> } | undefined;
    let dropped: { rows: Promise<unknown[]> } | undefined;
    const run = await counted(() =>
      db.transaction().execute(async (trx) => {
        await sql`savepoint write_unit`.execute(trx);
        kept = await answered(trx, 60, 'kept');
        await sql`release write_unit`.execute(trx);
        assert.deepEqual(
          await kept.rows,
          [{ id: 60, note: 'kept', tenfold: 600 }],
          'answered with its RELEASE',
        );
        await sql`savepoint write_unit`.execute(trx);
        undone = await answered(trx, 61, 'undone');
        await sql`rollback to write_unit`.execute(trx);
        await sql`release write_unit`.execute(trx);
      }),
    );
    assert.equal(run.error, undefined);
    assert.equal(
      run.trips,
      4,
      'BEGIN, SAVEPOINT, statement and RELEASE; then ROLLBACK TO, RELEASE, COMMIT each',
    );
    await assert.rejects(undone!.rows, /rolled back before it was sent/);
    const thrown = await counted(() =>
      db.transaction().execute(async (trx) => {
        dropped = await answered(trx, 62, 'never sent');
        throw new Error('changed my mind');
      }),
    );
    assert.equal((thrown.error as Error).message, 'changed my mind');
    assert.equal(thrown.trips, 0);
    await assert.rejects(dropped!.rows, /rolled back before it was sent/);
    assert.deepEqual(await stored(), [[60, 'kept']]);
  });

  test('a statement answered later outside a transaction runs at once', async () => {
    const run = await counted(() => answered(db, 70, 'alone'));
    assert.equal(run.trips, 1);
    assert.deepEqual(await run.value!.rows, [{ id: 70, note: 'alone', tenfold: 700 }]);
    assert.deepEqual(await stored(), [[70, 'alone']]);
  });
});
