import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { type Database, openDatabase } from '../src/storage/database.ts';
import { freshDatabase, type TestDatabase } from './support/databases.ts';

// Two processes writing one embedded database (the server and a CLI command, or two CLI commands):
// a transaction that read first and wrote second used to fail at once with SQLITE_BUSY whenever the
// other committed in between. Transactions now take the write lock when they begin.
describe('embedded engine transactions', () => {
  let file: TestDatabase;
  let database: Database;
  let other: SQLite.Database;
  before(async () => {
    file = await freshDatabase('sqlite');
    database = openDatabase(file.url);
    await database.db.schema.createTable('notes').addColumn('text', 'text').execute();
    other = new SQLite(file.url.slice('sqlite:'.length));
    other.pragma('busy_timeout = 0');
  });
  after(async () => {
    other.close();
    await database.close();
    await file.drop();
  });

  test('a transaction holds the write lock from its first statement, so its later write cannot be refused', async () => {
    const refusedMeanwhile: string[] = [];
    await database.db.transaction().execute(async (trx) => {
      const before = await sql`select text from notes`.execute(trx);
      assert.deepEqual(before.rows, []);
      // Another connection trying to write while the transaction is open waits (here: is refused,
      // its busy timeout being 0) instead of committing under the transaction's feet.
      try {
        other.prepare("insert into notes (text) values ('from the other process')").run();
      } catch (error) {
        refusedMeanwhile.push((error as { code?: string }).code ?? String(error));
      }
      await sql`insert into notes (text) values ('from the transaction')`.execute(trx);
    });
    assert.deepEqual(refusedMeanwhile, ['SQLITE_BUSY']);
    other.prepare("insert into notes (text) values ('from the other process')").run();
    const stored = other.prepare('select text from notes order by rowid').pluck().all();
    assert.deepEqual(stored, ['from the transaction', 'from the other process']);
  });
  test('writeAtOnce commits before it returns, refuses to run inside an open transaction, and rolls back a throw', async () => {
    const write = database.writeAtOnce;
    assert.ok(write);
    const written = write((run) => run("insert into notes (text) values ('at once')", []).length);
    assert.deepEqual(written, { value: 0 });
    // Committed: another connection reads it at once.
    assert.equal(other.prepare("select count(*) from notes where text = 'at once'").pluck().get(), 1);
    await database.db.transaction().execute(async (trx) => {
      await sql`insert into notes (text) values ('in a transaction')`.execute(trx);
      assert.equal(
        write((run) => run("insert into notes (text) values ('not run')", [])),
        undefined,
      );
    });
    assert.throws(
      () =>
        write((run) => {
          run("insert into notes (text) values ('rolled back')", []);
          throw new Error('the work failed');
        }),
      /the work failed/,
    );
    const texts = other.prepare('select text from notes').pluck().all();
    assert.ok(texts.includes('in a transaction'));
    assert.ok(!texts.includes('not run'));
    assert.ok(!texts.includes('rolled back'));
    // The connection is free again: the next write goes at once.
    assert.deepEqual(
      write((run) => run("insert into notes (text) values ('after')", []).length),
      { value: 0 },
    );
  });
});
