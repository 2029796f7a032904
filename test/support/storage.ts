// What a repository's contract suite needs: a fresh, migrated database of one engine, its write
// batcher, and members to own rows. Call it inside the suite's describe: it registers before/after.
import { after, before } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { type Database, openDatabase } from '../../src/storage/database.ts';
import { WriteBatcher } from '../../src/storage/engine/write-batcher.ts';
import { migrateToLatest } from '../../src/storage/migrations.ts';
import type { Db } from '../../src/storage/schema.ts';
import { type EngineName, freshDatabase, type TestDatabase } from './databases.ts';

export interface StorageUnderTest {
  readonly db: Db;
  readonly database: Database;
  /** A WritePort: what a repository function that opens its own transaction takes. */
  readonly port: { writes: WriteBatcher; db: Db };
  readonly clock: ManualClock;
  /** A new member's id (rows of most tables belong to one). */
  member(name: string): Promise<string>;
}

export function storageUnderTest(engine: EngineName): StorageUnderTest {
  let target: TestDatabase;
  let database: Database;
  let writes: WriteBatcher;
  const clock = new ManualClock();
  let members = 0;
  before(async () => {
    target = await freshDatabase(engine);
    database = openDatabase(target.url);
    await migrateToLatest(database.db);
    writes = new WriteBatcher(database);
  });
  after(async () => {
    await database?.close();
    await target?.drop();
  });
  return {
    get db() {
      return database.db;
    },
    get database() {
      return database;
    },
    get port() {
      return { writes, db: database.db };
    },
    clock,
    // Written as a fixture row: the members repository's own rules are not what these suites test.
    async member(name) {
      const id = `mem_${name.toLowerCase()}_${++members}`;
      const now = clock.now();
      const handle = `${name.toLowerCase()}-${members}`;
      const row = {
        id,
        email: `${handle}@example.org`,
        name,
        handle,
        tier: 'member',
        created_at: now,
        updated_at: now,
      };
      await database.db.insertInto('members').values(row).execute();
      return id;
    },
  };
}
