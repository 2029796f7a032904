// The migration files are numbered without gaps while the names Kysely records stay those existing
// databases hold: a database migrated by the earlier list (whose numbers skipped 0010) upgrades
// without running anything twice, and a fresh one migrates to the same schema.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { after, describe, test } from 'node:test';
import type { Kysely } from 'kysely';
import { type Migration, Migrator } from 'kysely/migration';
import { type Database, openDatabase } from '../../src/storage/database.ts';
import { MIGRATIONS, migrateToLatest, pendingMigrations } from '../../src/storage/migrations.ts';
import { engines, freshDatabase, type TestDatabase } from '../support/databases.ts';

/** The names databases made before the files were renumbered recorded, in the order they ran. */
const RECORDED_BEFORE_THE_RENUMBERING = [
  '0001_initial',
  '0002_event_log_and_tier_requests',
  '0003_sign_in_links',
  '0004_member_operations',
  '0005_oidc_logins',
  '0006_leaderboard',
  '0007_research',
  '0008_content',
  '0009_signing_keys',
  '0011_oauth',
  '0012_a2a_tasks',
  '0013_payments',
  '0014_auth_notify',
  '0015_refusals',
  '0016_privacy',
];

const FILES = readdirSync('src/storage/migrations')
  .filter((name) => name.endsWith('.ts'))
  .sort();

test('the files are numbered 0001 on without gaps, one per migration, in the order they run', () => {
  assert.deepEqual(
    FILES.map((name) => name.slice(0, 4)),
    FILES.map((_, i) => String(i + 1).padStart(4, '0')),
  );
  assert.equal(FILES.length, MIGRATIONS.length);
  // Each recorded name ends as its file's name does (0010-oauth.ts is recorded as 0011_oauth).
  for (const [i, [name]] of MIGRATIONS.entries())
    assert.equal(name.slice(5).replaceAll('_', '-'), FILES[i].slice(5, -'.ts'.length), name);
});

test('recorded names never change, are unique and sort in the order the migrations run', () => {
  const names = MIGRATIONS.map(([name]) => name);
  assert.deepEqual(names.slice(0, RECORDED_BEFORE_THE_RENUMBERING.length), RECORDED_BEFORE_THE_RENUMBERING);
  assert.deepEqual([...names].sort(), names);
  assert.equal(new Set(names).size, names.length);
});

/** Migrates as the earlier code did: its names, up to (and with) `last`. */
async function migrateAsBefore(db: Kysely<any>, last: string): Promise<void> {
  const bodies = new Map(
    MIGRATIONS.map(([, migration], i) => [RECORDED_BEFORE_THE_RENUMBERING[i], migration]),
  );
  const before: Record<string, Migration> = {};
  for (const name of RECORDED_BEFORE_THE_RENUMBERING) before[name] = bodies.get(name) as Migration;
  const migrator = new Migrator({ db, provider: { getMigrations: async () => before } });
  const { error } = await migrator.migrateTo(last);
  if (error) throw error;
}

const recorded = (db: Kysely<any>) =>
  db.selectFrom('kysely_migration').select(['name', 'timestamp']).orderBy('name').execute() as Promise<
    { name: string; timestamp: string }[]
  >;

const schemaOf = async (db: Kysely<any>) =>
  (await db.introspection.getTables())
    .map((table) => `${table.name}(${table.columns.map((c) => `${c.name}:${c.dataType}`).join(',')})`)
    .sort();

for (const engine of engines) {
  describe(`migrations (${engine.name})`, { skip: engine.skip }, () => {
    const opened: { target: TestDatabase; database: Database }[] = [];
    const open = async () => {
      const target = await freshDatabase(engine.name);
      const database = openDatabase(target.url);
      opened.push({ target, database });
      return database.db as unknown as Kysely<any>;
    };
    after(async () => {
      for (const { target, database } of opened) {
        await database.close();
        await target.drop();
      }
    });

    test('a database the earlier list migrated fully runs only the migrations added since', async () => {
      const db = await open();
      await migrateAsBefore(db, RECORDED_BEFORE_THE_RENUMBERING.at(-1) as string);
      const names = await recorded(db);
      await migrateToLatest(db);
      assert.deepEqual(await pendingMigrations(db), []);
      const after = await recorded(db);
      assert.deepEqual(after.slice(0, names.length), names, 'nothing ran again, nothing was renamed');
      assert.deepEqual(
        after.slice(names.length).map(({ name }) => name),
        MIGRATIONS.slice(RECORDED_BEFORE_THE_RENUMBERING.length).map(([name]) => name),
      );
      const fresh = await open();
      await migrateToLatest(fresh);
      assert.deepEqual(await schemaOf(db), await schemaOf(fresh));
    });

    test('a database the earlier list migrated in part gets the rest, as a fresh one gets all', async () => {
      const partly = await open();
      await migrateAsBefore(partly, '0009_signing_keys');
      assert.deepEqual((await pendingMigrations(partly))[0], '0011_oauth');
      await migrateToLatest(partly);
      const fresh = await open();
      await migrateToLatest(fresh);
      assert.deepEqual(await pendingMigrations(partly), []);
      assert.deepEqual(
        (await recorded(partly)).map(({ name }) => name),
        MIGRATIONS.map(([name]) => name),
      );
      assert.deepEqual(await schemaOf(partly), await schemaOf(fresh));
    });
  });
}
