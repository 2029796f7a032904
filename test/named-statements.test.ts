// PostgreSQL: the service's parameterized statements are prepared once per connection under a name
// (src/storage/engine/named-statements.ts), except selections by `*`, which must follow another instance's
// migration. Checked in PostgreSQL's own view of the connection's prepared statements.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { type Database, openDatabase } from '../src/storage/database.ts';
import { migrateToLatest } from '../src/storage/migrations.ts';
import { engines, freshDatabase, type TestDatabase } from './support/databases.ts';

const postgres = engines.find((engine) => engine.name === 'postgres')!;

describe('named statements (postgres)', { skip: postgres.skip }, () => {
  let database: TestDatabase;
  let opened: Database;
  before(async () => {
    database = await freshDatabase('postgres');
    opened = openDatabase(database.url);
    await migrateToLatest(opened.db);
  });
  after(async () => {
    await opened?.close();
    await database?.drop();
  });

  test('a statement with parameters is prepared once and answers fresh values each time', async () => {
    await opened.db.connection().execute(async (connection) => {
      const keys = ['named-a', 'named-b', 'named-c'];
      for (const [i, key] of keys.entries())
        await connection
          .insertInto('counters')
          .values({ key, count: i + 1, expires_at: 1 })
          .execute();
      const counts: number[] = [];
      for (const key of keys) {
        const row = await connection
          .selectFrom('counters')
          .select('count')
          .where('key', '=', key)
          .executeTakeFirstOrThrow();
        counts.push(Number(row.count));
      }
      assert.deepEqual(counts, [1, 2, 3]);
      const prepared = await sql<{ name: string; statement: string }>`
        select name, statement from pg_prepared_statements order by name`.execute(connection);
      const select = prepared.rows.filter((row) => /^select "count" from "counters"/.test(row.statement));
      assert.equal(select.length, 1, JSON.stringify(prepared.rows));
      assert.match(select[0].name, /^ac_\d+$/);
      const insert = prepared.rows.filter((row) => /^insert into "counters"/.test(row.statement));
      assert.equal(insert.length, 1, 'the insert too, once for its three runs');
      const stored = await connection
        .selectFrom('counters')
        .select(['key', 'count'])
        .orderBy('key')
        .execute();
      assert.deepEqual(
        stored.filter((row) => keys.includes(row.key)).map((row) => [row.key, Number(row.count)]),
        [
          ['named-a', 1],
          ['named-b', 2],
          ['named-c', 3],
        ],
      );
    });
  });

  test('a selection by * and a statement without parameters stay unnamed', async () => {
    await opened.db.connection().execute(async (connection) => {
      const rows = await connection.selectFrom('counters').selectAll().where('key', '=', 'named-a').execute();
      assert.equal(rows.length, 1);
      await sql`select 1 as one`.execute(connection);
      const prepared = await sql<{ statement: string }>`
        select statement from pg_prepared_statements`.execute(connection);
      assert.ok(
        prepared.rows.every((row) => !row.statement.includes('*') && !row.statement.includes('select 1')),
        JSON.stringify(prepared.rows),
      );
    });
  });

  test('another instance adding a column does not break this one’s prepared reads', async () => {
    const other = openDatabase(database.url);
    try {
      const read = () =>
        opened.db.selectFrom('counters').select(['key', 'count']).where('key', '=', 'named-b').execute();
      const readAll = () =>
        opened.db.selectFrom('counters').selectAll().where('key', '=', 'named-b').execute();
      // Every connection of the pool has run both before the column comes.
      for (let i = 0; i < 30; i++) await Promise.all([read(), readAll(), read(), readAll()]);
      await sql`alter table counters add column named_probe integer`.execute(other.db);
      for (let i = 0; i < 10; i++) {
        const [named, all] = await Promise.all([read(), readAll()]);
        assert.deepEqual(
          named.map((row) => [row.key, Number(row.count)]),
          [['named-b', 2]],
        );
        assert.equal(
          (all[0] as { named_probe?: unknown }).named_probe,
          null,
          'a selection by * sees the new column',
        );
      }
    } finally {
      await sql`alter table counters drop column if exists named_probe`.execute(other.db);
      await other.close();
    }
  });

  test('a transaction whose statement fails is refused with that error, and its connection serves the next', async () => {
    await assert.rejects(
      opened.db.transaction().execute(async (trx) => {
        await trx.insertInto('counters').values({ key: 'named-a', count: 9, expires_at: 1 }).execute();
      }),
      (error: { code?: string }) => error.code === '23505',
    );
    for (let i = 0; i < 20; i++) {
      const key = `pipelined-after-${i}`;
      await opened.db
        .transaction()
        .execute((trx) => trx.insertInto('counters').values({ key, count: i, expires_at: 1 }).execute());
    }
    const stored = await opened.db
      .selectFrom('counters')
      .select(['key', 'count'])
      .where('key', 'like', 'pipelined-after-%')
      .execute();
    assert.equal(stored.length, 20);
    const named = await opened.db
      .selectFrom('counters')
      .select('count')
      .where('key', '=', 'named-a')
      .executeTakeFirstOrThrow();
    assert.equal(Number(named.count), 1, 'the refused insert changed nothing');
  });
});
