// PostgreSQL: the usual highlight submission (a new id, quota left) is one round trip for its whole
// transaction: BEGIN, the story with the quota it spends, the call's commit hook and COMMIT
// (src/domain/highlights/highlights.ts, src/storage/engine/statement-groups.ts). A taken id or a spent quota
// makes that statement refuse; nothing of it is kept and the submission is written the general way.
// Round trips are the server's ReadyForQuery messages on the pool's connections; every case reads
// what was stored.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Kysely, PostgresDialect, sql, type Transaction } from 'kysely';
import pg from 'pg';
import { ApiError } from '../src/core/errors.ts';
import { submitHighlight } from '../src/domain/highlights/highlights.ts';
import { type Database, openDatabase } from '../src/storage/database.ts';
import { namingPool } from '../src/storage/engine/named-statements.ts';
import { arg, prepare } from '../src/storage/engine/prepared.ts';
import { SharedTransactionFailed, WriteBatcher } from '../src/storage/engine/write-batcher.ts';
import { migrateToLatest } from '../src/storage/migrations.ts';
import type { Db, Schema } from '../src/storage/schema.ts';
import { type CommitHook, transact, withCommitHook } from '../src/storage/transactions.ts';
import { engines, freshDatabase, type TestDatabase, testPool } from './support/databases.ts';

const postgres = engines.find((engine) => engine.name === 'postgres')!;
const NOW = Date.UTC(2026, 6, 16, 12);

describe('highlight submission round trips (postgres)', { skip: postgres.skip }, () => {
  let target: TestDatabase;
  let pool: pg.Pool;
  let db: Db;
  let deps: Parameters<typeof submitHighlight>[0];
  let database: Database;
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
    pool = testPool(target.url, 2);
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
    database = { engine: 'postgres', db } as Database;
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

  describe('several calls at once share a transaction', () => {
    const members = ['s1', 's2', 's3', 's4', 's5', 's6', 's7', 's8'];
    /** A port of its own (one instance's), with a daily quota of 100 a token. */
    const instance = () =>
      ({
        ...deps,
        config: { limits: { highlightsPerDay: 100 } },
        writes: new WriteBatcher(database),
      }) as typeof deps;
    const ownPools: Kysely<Schema>[] = [];
    /** Another instance: its own pool of connections too. */
    const otherInstance = () => {
      const own = new Kysely<Schema>({
        dialect: new PostgresDialect({
          pool: namingPool(testPool(target.url, 4), pg),
        }),
      });
      ownPools.push(own);
      const writes = new WriteBatcher({ engine: 'postgres', db: own } as Database);
      return { ...deps, db: own, config: { limits: { highlightsPerDay: 100 } }, writes } as typeof deps;
    };
    after(() => Promise.all(ownPools.map((own) => own.destroy())));
    const send = (port: typeof deps, member: string, id: string, call: string) =>
      withCommitHook(
        hookFor(call),
        () =>
          submitHighlight(port, {
            story: { id, title: `story ${id}` },
            memberId: member,
            tokenId: `t-${member}`,
          }),
        `member:${member}`,
      );
    /** How many transactions wrote these stories (rows one transaction wrote share its xmin). */
    const writers = async (ids: string[]) => {
      const rows = await db
        .selectFrom('highlights')
        .select(sql<string>`xmin::text`.as('xmin'))
        .where('id', 'in', ids)
        .execute();
      return new Set(rows.map((row) => row.xmin)).size;
    };
    const spentBy = async (member: string) =>
      (
        await db
          .selectFrom('counters')
          .select('count')
          .where('key', 'like', `highlights:t-${member}:%`)
          .execute()
      ).map((row) => Number(row.count));
    const callsLike = async (prefix: string) =>
      (
        await db
          .selectFrom('settings')
          .select('key')
          .where('key', 'like', `call:${prefix}%`)
          .orderBy('key')
          .execute()
      ).map((row) => row.key);

    before(async () => {
      await db
        .insertInto('members')
        .values(
          members.map((id) => ({
            id,
            email: `${id}@example.org`,
            name: id,
            handle: id,
            tier: 'core',
            created_at: NOW,
            updated_at: NOW,
          })),
        )
        .execute();
    });

    test('one goes at once, alone; the seven that waited go together: two transactions, two round trips', async () => {
      const port = instance();
      const ids = members.map((member) => `shared-${member}`);
      const run = await counted(() =>
        Promise.all(members.map((member, i) => send(port, member, ids[i], `shared-${member}`))),
      );
      assert.equal(run.error, undefined, String(run.error));
      assert.deepEqual(
        run.value?.map((result) => [result.refreshed, result.rate.count]),
        members.map(() => [false, 1]),
      );
      assert.equal(run.trips, 2);
      assert.equal(await writers(ids), 2);
      for (const member of members) assert.deepEqual(await spentBy(member), [1], member);
      assert.deepEqual(
        await callsLike('shared-'),
        members.map((member) => `call:shared-${member}`),
      );
    });

    test('a refusal fails the shared transaction: each call goes again alone and gets its own outcome', async () => {
      const port = instance();
      // s8's story from the test before is pending: sent again, it is refreshed and spends nothing.
      const sends = [
        send(port, 's1', 'again-s1', 'again-s1'),
        send(port, 's2', 'again-s2', 'again-s2'),
        send(port, 's3', 'again-s3', 'again-s3'),
        send(port, 's8', 'shared-s8', 'again-s8'),
        send(port, 's4', 'again-s4', 'again-s4'),
        // Not a member: its story breaks the foreign key, and only this call hears of it.
        withCommitHook(hookFor('again-nobody'), () =>
          submitHighlight(port, {
            story: { id: 'again-nobody', title: 'x' },
            memberId: 'nobody',
            tokenId: 't-nobody',
          }),
        ),
      ];
      const outcomes = await Promise.allSettled(sends);
      const [s1, s2, s3, s8, s4, nobody] = outcomes;
      for (const outcome of [s1, s2, s3, s4]) {
        assert.equal(outcome.status, 'fulfilled', String((outcome as PromiseRejectedResult).reason));
        assert.equal((outcome as PromiseFulfilledResult<{ refreshed: boolean }>).value.refreshed, false);
      }
      assert.equal(s8.status, 'fulfilled', String((s8 as PromiseRejectedResult).reason));
      assert.equal((s8 as PromiseFulfilledResult<{ refreshed: boolean }>).value.refreshed, true);
      assert.equal(nobody.status, 'rejected');
      assert.equal(((nobody as PromiseRejectedResult).reason as { code?: string }).code, '23503');
      for (const member of ['s1', 's2', 's3', 's4']) assert.deepEqual(await spentBy(member), [2], member);
      assert.deepEqual(await spentBy('s8'), [1], 'a refresh spends nothing');
      assert.deepEqual(await spentBy('nobody'), []);
      const stored = await db
        .selectFrom('highlights')
        .select(['id', 'story'])
        .where('id', 'like', 'again-%')
        .orderBy('id')
        .execute();
      assert.deepEqual(
        stored.map((row) => row.id),
        ['again-s1', 'again-s2', 'again-s3', 'again-s4'],
      );
      assert.deepEqual(await callsLike('again-'), [
        'call:again-s1',
        'call:again-s2',
        'call:again-s3',
        'call:again-s4',
        'call:again-s8',
      ]);
    });

    test("a shared transaction runs its units in lane order, so instances take members' rows in one order", async () => {
      const writes = new WriteBatcher(database);
      const ran: string[] = [];
      const lanes = ['member:b', 'member:a', 'member:d', 'member:c', 'member:e'];
      const answers = await Promise.all(
        lanes.map((lane) =>
          writes.runPipelined(async () => {
            ran.push(lane);
            return lane;
          }, lane),
        ),
      );
      assert.deepEqual(answers, lanes);
      // The first goes at once; the four that waited for it, together, in lane order.
      assert.deepEqual(ran, ['member:b', 'member:a', 'member:c', 'member:d', 'member:e']);
    });

    test('one shared transaction is under way; a second starts only while a full batch waits', async () => {
      const writes = new WriteBatcher(database);
      const ran: string[] = [];
      // Each unit reads its own name back from PostgreSQL, so each runs in a real transaction.
      const unit = (name: string, held?: Promise<void>) => async (trx: Transaction<Schema>) => {
        const { rows } = await sql<{ name: string }>`select ${name}::text as name`.execute(trx);
        ran.push(rows[0].name);
        await held;
        return rows[0].name;
      };
      const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
      // A transaction the batcher starts asks the pool for a connection a few microtasks later and
      // holds it (or waits for it, or opens it) until it ends: with `ran`, a wrong one is seen however
      // slowly the machine runs its statements.
      const connectionsTaken = () => pool.totalCount - pool.idleCount + pool.waitingCount;
      let letGo!: () => void;
      const held = new Promise<void>((resolve) => {
        letGo = resolve;
      });
      const first = writes.runPipelined(unit('first', held), 'member:a');
      const few = Array.from({ length: 10 }, (_, i) => `few-${i}`);
      const more = Array.from({ length: 256 }, (_, i) => `more-${i}`);
      const waiting: Promise<string>[] = [];
      // A failed assertion must not leave the first transaction open (the suite would never end).
      try {
        for (let tries = 0; ran.length === 0 && tries < 1000; tries++) await pause(5);
        assert.deepEqual(ran, ['first']);
        for (const name of few) waiting.push(writes.runPipelined(unit(name), 'member:b'));
        await pause(100);
        assert.deepEqual(ran, ['first'], 'ten waiting units wait for the transaction under way');
        assert.equal(connectionsTaken(), 1, 'and no second transaction is taking a connection');
        // 246 more make a full batch (256) waiting: it goes in a second transaction beside the first.
        for (const name of more) waiting.push(writes.runPipelined(unit(name), 'member:c'));
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise((resolve) => {
          timer = setTimeout(resolve, 5000);
        });
        const gone = await Promise.race([Promise.all(waiting.slice(0, 256)), late]);
        clearTimeout(timer);
        assert.deepEqual(gone, [...few, ...more.slice(0, 246)], 'the full batch went within 5 s');
        assert.deepEqual(ran, ['first', ...few, ...more.slice(0, 246)], 'committed beside the first');
        // The ten left are not a full batch: they wait for the first transaction to end.
        await pause(100);
        assert.equal(ran.length, 257, 'the second transaction did not go on for fewer than a full batch');
        assert.equal(connectionsTaken(), 1, 'nor did a third start');
      } finally {
        letGo();
      }
      assert.deepEqual(await Promise.all([first, ...waiting.slice(256)]), ['first', ...more.slice(246)]);
      assert.deepEqual(ran.slice(257), more.slice(246));
    });

    test('a database that cannot be reached fails each write of a shared transaction with its own error, once', async () => {
      const away = openDatabase('postgres://postgres@127.0.0.1:1/nowhere');
      const writes = new WriteBatcher(away);
      let ran = 0;
      const outcomes = await Promise.allSettled(
        Array.from({ length: 5 }, (_, i) =>
          writes.runPipelined(async () => {
            ran++;
            return i;
          }, `member:${i}`),
        ),
      );
      await away.close();
      for (const outcome of outcomes) {
        assert.equal(outcome.status, 'rejected');
        const reason = (outcome as PromiseRejectedResult).reason;
        assert.ok(!(reason instanceof SharedTransactionFailed), String(reason));
        assert.equal((reason as { code?: string }).code, 'ECONNREFUSED', String(reason));
      }
      assert.equal(ran, 0, 'no connection, so no unit ran');
    });

    test('two instances writing for the same members at once: no lock cycle, every count exact', async () => {
      const before = new Map<string, number>();
      for (const member of members) before.set(member, (await spentBy(member))[0]);
      const ports = [otherInstance(), otherInstance()];
      // One instance is sent the members in ascending order, the other in descending order: without
      // a common order, their shared transactions would take the members' quota rows crosswise.
      const memberOf = (i: number) => {
        const k = Math.floor(i / 2) % members.length;
        return members[i % 2 === 0 ? k : members.length - 1 - k];
      };
      // Three rounds: a crosswise take does not close a cycle every time.
      const writes = 240;
      const results: Awaited<ReturnType<typeof submitHighlight>>[] = [];
      for (let round = 0; round < 3; round++) {
        const started = performance.now();
        const sends = Array.from({ length: writes / 3 }, (_, j) => {
          const i = round * (writes / 3) + j;
          return send(ports[i % 2], memberOf(i), `race-${i}`, `race-${String(i).padStart(3, '0')}`);
        });
        results.push(...(await Promise.all(sends)));
        // PostgreSQL breaks a lock cycle after deadlock_timeout (1 s): no round waited that long.
        const took = Math.round(performance.now() - started);
        assert.ok(took < 1000, `round ${round}: ${took} ms`);
      }
      assert.equal(results.filter((result) => !result.refreshed).length, writes);
      for (const member of members) {
        const spent = before.get(member) ?? 0;
        const counts = results.filter((_, i) => memberOf(i) === member).map((result) => result.rate.count);
        assert.deepEqual(
          [...counts].sort((a, b) => a - b),
          Array.from({ length: writes / members.length }, (_, k) => spent + k + 1),
          `${member}: each count once, after the ${spent} before`,
        );
        assert.deepEqual(await spentBy(member), [spent + writes / members.length], member);
      }
      assert.equal((await callsLike('race-')).length, writes);
      assert.ok(
        (await writers(results.map((_, i) => `race-${i}`))) < writes,
        'some transactions carried several',
      );
    });
  });
});
