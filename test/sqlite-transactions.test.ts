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
});
