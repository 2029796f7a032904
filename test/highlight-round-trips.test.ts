// PostgreSQL: the usual highlight submission (a new id, quota left) is one round trip for its whole
// transaction: BEGIN, the story with the quota it spends, the call's commit hook and COMMIT
// (src/domain/highlights/highlights.ts, src/storage/statement-groups.ts). A taken id or a spent quota
// makes that statement refuse; nothing of it is kept and the submission is written the general way.
// Round trips are the server's ReadyForQuery messages on the pool's connections; every case reads
// what was stored.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { ApiError } from '../src/core/errors.ts';
import { submitHighlight } from '../src/domain/highlights/highlights.ts';
import type { Database } from '../src/storage/database.ts';
import { migrateToLatest } from '../src/storage/migrations.ts';
import { namingPool } from '../src/storage/named-statements.ts';
import { arg, prepare } from '../src/storage/prepared.ts';
import type { Db, Schema } from '../src/storage/schema.ts';
import { type CommitHook, transact, withCommitHook } from '../src/storage/transactions.ts';
import { WriteBatcher } from '../src/storage/write-batcher.ts';
import { engines, freshDatabase, type TestDatabase } from './support/databases.ts';

const postgres = engines.find((engine) => engine.name === 'postgres')!;
const NOW = Date.UTC(2026, 6, 16, 12);

describe('highlight submission round trips (postgres)', { skip: postgres.skip }, () => {
  let target: TestDatabase;
  let pool: pg.Pool;
  let db: Db;
  let deps: Parameters<typeof submitHighlight>[0];
  let roundTrips = 0;

  /** Stands in for the pipeline's activity row: a deferred write that commits with the call's first transaction. */
  const noteCall = prepare(
    (schemaDb) => schemaDb.insertInto('settings').values({ key: arg(0), value: 'written' }),
    {
      deferred: true,
    },
  );
  const hookFor = (call: string): CommitHook => ({
    used: false,
    run: async (trx) => {
      await noteCall(trx, `call:${call}`);
    },
    rolledBack: () => {},
  });
  const submit = (id: string, call: string) =>
    withCommitHook(hookFor(call), () =>
      submitHighlight(deps, { story: { id, title: `story ${id}` }, memberId: 'm1', tokenId: 't1' }),
    );
  const counted = async <T>(work: () => Promise<T>) => {
    const start = roundTrips;
    try {
      return { value: await work(), trips: roundTrips - start };
    } catch (error) {
      return { error, trips: roundTrips - start };
    }
  };
  const stories = async () =>
    (await db.selectFrom('highlights').select(['id', 'story', 'status']).orderBy('id').execute()).map(
      (row) => [row.id, JSON.parse(row.story).title, row.status],
    );
  const quotaSpent = async () =>
    (await db.selectFrom('counters').select('count').where('key', 'like', 'highlights:t1:%').execute()).map(
      (row) => Number(row.count),
    );
  const calls = async () =>
    (
      await db.selectFrom('settings').select('key').where('key', 'like', 'call:%').orderBy('key').execute()
    ).map((row) => row.key);

  before(async () => {
    target = await freshDatabase('postgres');
    pool = new pg.Pool({ connectionString: target.url, max: 2 });
    pool.on('connect', (client) => {
      const connection = (client as unknown as { connection: NodeJS.EventEmitter }).connection;
      connection.on('readyForQuery', () => roundTrips++);
    });
    // As the service reads int8 (storage/database.ts).
    pg.types.setTypeParser(20, (value) => Number(value));
    db = new Kysely<Schema>({ dialect: new PostgresDialect({ pool: namingPool(pool, pg) }) });
    await migrateToLatest(db);
    await db
      .insertInto('members')
      .values({
        id: 'm1',
        email: 'm1@example.org',
        name: 'M',
        handle: 'm1',
        tier: 'core',
        created_at: NOW,
        updated_at: NOW,
      })
      .execute();
    const database = { engine: 'postgres', db } as Database;
    deps = {
      db,
      clock: { now: () => NOW },
      config: { limits: { highlightsPerDay: 2 } } as never,
      writes: new WriteBatcher(database),
    } as Parameters<typeof submitHighlight>[0];
  });
  after(async () => {
    await db?.destroy();
    await target?.drop();
  });

  test('a new story with quota left: one round trip for the story, its quota and the commit hook', async () => {
    const run = await counted(() => submit('first', 'a'));
    assert.equal(run.error, undefined, String(run.error));
    assert.equal(run.trips, 1);
    assert.equal(run.value?.refreshed, false);
    assert.equal(run.value?.rate.count, 1);
    assert.deepEqual(await stories(), [['first', 'story first', 'pending']]);
    assert.deepEqual(await quotaSpent(), [1]);
    assert.deepEqual(await calls(), ['call:a']);
  });

  test('a pending id sent again is refused by that statement and refreshed the general way, spending nothing', async () => {
    const run = await counted(() =>
      withCommitHook(hookFor('b'), () =>
        submitHighlight(deps, {
          story: { id: 'first', title: 'story first, again' },
          memberId: 'm1',
          tokenId: 't1',
        }),
      ),
    );
    assert.equal(run.error, undefined, String(run.error));
    assert.equal(run.value?.refreshed, true);
    assert.equal(run.value?.rate.count, 1);
    assert.ok(run.trips > 2, `the refused group and its ROLLBACK, then the general write (${run.trips})`);
    assert.deepEqual(await stories(), [['first', 'story first, again', 'pending']]);
    assert.deepEqual(await quotaSpent(), [1]);
    assert.deepEqual(await calls(), ['call:a', 'call:b'], 'the hook committed once, with the refresh');
  });

  test('the last unit of quota goes in one round trip; past it the 429, and nothing of that call is stored', async () => {
    const last = await counted(() => submit('second', 'c'));
    assert.equal(last.trips, 1);
    assert.equal(last.value?.rate.count, 2);
    const refused = await counted(() => submit('third', 'd'));
    assert.ok(refused.error instanceof ApiError, String(refused.error));
    assert.equal((refused.error as ApiError).status, 429);
    assert.deepEqual(await stories(), [
      ['first', 'story first, again', 'pending'],
      ['second', 'story second', 'pending'],
    ]);
    assert.deepEqual(await quotaSpent(), [2]);
    assert.deepEqual(await calls(), ['call:a', 'call:b', 'call:c']);
  });

  test('inside a transaction already open (a sandbox rehearsal) the story is written in it, the general way', async () => {
    await db.deleteFrom('counters').execute();
    const run = await counted(() =>
      transact(deps, async () => {
        const result = await submitHighlight(deps, {
          story: { id: 'inside', title: 'story inside' },
          memberId: 'm1',
          tokenId: 't1',
        });
        const seen = await db.selectFrom('highlights').select('id').where('id', '=', 'inside').execute();
        return { result, seenOutside: seen.length };
      }),
    );
    assert.equal(run.error, undefined, String(run.error));
    assert.equal(run.value?.result.refreshed, false);
    assert.equal(run.value?.seenOutside, 0, 'not committed before the transaction around it');
    assert.deepEqual(
      (await stories()).map(([id]) => id),
      ['first', 'inside', 'second'],
    );
    assert.deepEqual(await quotaSpent(), [1]);
  });
});
