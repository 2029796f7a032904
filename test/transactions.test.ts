// The one transaction mechanism (storage/transactions.ts): work joins the transaction already open
// in its call, and a commit hook (the pipeline's activity row) commits with the call's first
// transaction or not at all.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { toApiError } from '../src/core/errors.ts';
import { counters } from '../src/storage/counters.ts';
import { type Database, openDatabase } from '../src/storage/database.ts';
import { numberArg, prepare, runDeferred } from '../src/storage/engine/prepared.ts';
import { WriteBatcher } from '../src/storage/engine/write-batcher.ts';
import { migrateToLatest } from '../src/storage/migrations.ts';
import { type CommitHook, inLane, transact, withCommitHook } from '../src/storage/transactions.ts';
import { engines, freshDatabase, type TestDatabase } from './support/databases.ts';

for (const engine of engines) {
  describe(`one transaction mechanism (${engine.name})`, { skip: engine.skip }, () => {
    let target: TestDatabase;
    let database: Database;
    let port: { writes: WriteBatcher };
    before(async () => {
      target = await freshDatabase(engine.name);
      database = openDatabase(target.url);
      await migrateToLatest(database.db);
      port = { writes: new WriteBatcher(database) };
    });
    after(async () => {
      await database?.close();
      await target?.drop();
    });

    const counter = (key: string) =>
      database.db.selectFrom('counters').select('count').where('key', '=', key).executeTakeFirst();
    const insert = (key: string) => (trx: Parameters<Parameters<typeof transact>[1]>[0]) =>
      trx
        .insertInto('counters')
        .values({ key, count: 1, expires_at: Date.now() + 60_000 })
        .execute();

    const bump = (key: string) => (trx: Parameters<Parameters<typeof transact>[1]>[0]) =>
      sql`update counters set count = count + 1 where key = ${key}`.execute(trx);

    test('work inside open work joins its transaction: a failure after it rolls both back', async () => {
      await assert.rejects(
        transact(port, async (trx) => {
          await insert('outer-1')(trx);
          // Nested work on the same port joins; on the embedded engine a second unit would wait forever.
          await transact(port, insert('inner-1'));
          throw new Error('after both');
        }),
        /after both/,
      );
      assert.equal(await counter('outer-1'), undefined);
      assert.equal(await counter('inner-1'), undefined);

      await transact(port, async (trx) => {
        await insert('outer-2')(trx);
        await transact(port, insert('inner-2'));
      });
      assert.deepEqual(await counter('outer-2'), { count: 1 });
      assert.deepEqual(await counter('inner-2'), { count: 1 });
    });

    test('a commit hook is written once, in the first transaction, and rolls back with it', async () => {
      const hookOf = (key: string): CommitHook => ({
        used: false,
        run: async (trx) => {
          await insert(key)(trx);
        },
        rolledBack: () => {},
      });

      const committed = hookOf('hook-ok');
      await withCommitHook(committed, async () => {
        await transact(port, insert('work-ok'));
        await transact(port, insert('work-ok-second'));
      });
      assert.equal(committed.used, true);
      assert.deepEqual(await counter('hook-ok'), { count: 1 });
      assert.deepEqual(await counter('work-ok-second'), { count: 1 });

      const rolledBack = hookOf('hook-failed');
      await assert.rejects(
        withCommitHook(rolledBack, () =>
          transact(port, async (trx) => {
            await insert('work-failed')(trx);
            throw new Error('the operation failed');
          }),
        ),
        /the operation failed/,
      );
      // The hook runs after the work: a failed unit never reached it, and nothing of it is stored.
      assert.equal(rolledBack.used, false);
      assert.equal(await counter('hook-failed'), undefined);
      assert.equal(await counter('work-failed'), undefined);

      const readOnly = hookOf('hook-unused');
      const value = await withCommitHook(readOnly, async () => 'read');
      assert.equal(value, 'read');
      assert.equal(readOnly.used, false);
      assert.equal(await counter('hook-unused'), undefined);
    });

    test('a hook whose transaction does not commit is undone, and the call’s next transaction carries it', async () => {
      await transact(port, insert('hook-taken'));
      let runs = 0;
      let undone = 0;
      const hook: CommitHook = {
        used: false,
        // Deferred, as the activity row is: on PostgreSQL its failure surfaces at the COMMIT.
        run: async (trx) => {
          runs++;
          const key = runs === 1 ? 'hook-taken' : 'hook-second';
          await runDeferred(
            trx,
            sql`insert into counters (key, count, expires_at) values (${key}, 1, ${Date.now() + 60_000})`,
          );
        },
        rolledBack: () => {
          undone++;
        },
      };
      await withCommitHook(hook, async () => {
        await assert.rejects(transact(port, insert('work-first')), /duplicate key|UNIQUE constraint/);
        assert.equal(hook.used, false);
        assert.equal(undone, 1);
        await transact(port, insert('work-second'));
      });
      assert.equal(runs, 2);
      assert.equal(undone, 1);
      assert.equal(hook.used, true);
      assert.equal(await counter('work-first'), undefined);
      assert.deepEqual(await counter('work-second'), { count: 1 });
      assert.deepEqual(await counter('hook-second'), { count: 1 });
    });

    test('concurrent units each commit or fail alone (group commit keeps them apart)', async () => {
      const results = await Promise.allSettled(
        Array.from({ length: 20 }, (_, i) =>
          transact(port, async (trx) => {
            await insert(`unit-${i}`)(trx);
            if (i % 5 === 0) throw new Error(`unit ${i} fails`);
          }),
        ),
      );
      for (let i = 0; i < 20; i++) {
        assert.equal(results[i].status, i % 5 === 0 ? 'rejected' : 'fulfilled');
        assert.deepEqual(await counter(`unit-${i}`), i % 5 === 0 ? undefined : { count: 1 });
      }
    });

    test('in a batch, a unit that fails at a statement or at its deferred write is rolled back alone', async () => {
      await insert('taken')(database.db as never);
      // Every unit of the lane waits and batches (on PostgreSQL the first two would run alone).
      const batching = { writes: new WriteBatcher(database, { unbatchedPerLane: 0 }) };
      const results = await Promise.allSettled(
        Array.from({ length: 12 }, (_, i) =>
          inLane('member:batched', () =>
            transact(batching, async (trx) => {
              await insert(`batched-${i}`)(trx);
              if (i % 4 === 1) await insert('taken')(trx);
              // On PostgreSQL the deferred write travels with the unit's RELEASE; its failure is the unit's.
              const key = i % 4 === 2 ? 'taken' : `batched-deferred-${i}`;
              await runDeferred(
                trx,
                sql`insert into counters (key, count, expires_at) values (${key}, ${1}, ${Date.now() + 60_000})`,
              );
              return i;
            }),
          ),
        ),
      );
      for (let i = 0; i < 12; i++) {
        const fails = i % 4 === 1 || i % 4 === 2;
        assert.equal(results[i].status, fails ? 'rejected' : 'fulfilled', `unit ${i}`);
        if (!fails) assert.equal((results[i] as PromiseFulfilledResult<number>).value, i);
        assert.deepEqual(await counter(`batched-${i}`), fails ? undefined : { count: 1 }, `unit ${i}`);
        assert.deepEqual(await counter(`batched-deferred-${i}`), fails ? undefined : { count: 1 });
      }
      // The same statements, on the same connections, still run.
      await transact(port, insert('after-failures'));
      assert.deepEqual(await counter('after-failures'), { count: 1 });
    });

    test('prepared statements run in their unit’s transaction: read its own rows, roll back with it alone', async () => {
      // On the embedded engine a prepared statement inside a transaction runs on the connection at once
      // (src/storage/engine/prepared.ts); it must still be part of that transaction and of its unit's savepoint.
      const batching = { writes: new WriteBatcher(database, { unbatchedPerLane: 0 }) };
      const expires = Date.now() + 60_000;
      const seen: number[] = [];
      const results = await Promise.allSettled(
        Array.from({ length: 6 }, (_, i) =>
          inLane('member:prepared', () =>
            transact(batching, async (trx) => {
              const first = await counters.hit(trx, `prepared-${i}`, expires);
              const second = await counters.hit(trx, `prepared-${i}`, expires);
              seen.push(first * 10 + second);
              await counters.hit(trx, 'prepared-shared', expires);
              if (i % 3 === 1) throw new Error(`unit ${i} fails after its writes`);
              return counters.peek(trx, `prepared-${i}`);
            }),
          ),
        ),
      );
      assert.deepEqual(seen, [12, 12, 12, 12, 12, 12]);
      for (let i = 0; i < 6; i++) {
        const fails = i % 3 === 1;
        assert.equal(results[i].status, fails ? 'rejected' : 'fulfilled', `unit ${i}`);
        if (!fails) assert.equal((results[i] as PromiseFulfilledResult<number>).value, 2);
        assert.deepEqual(await counter(`prepared-${i}`), fails ? undefined : { count: 2 }, `unit ${i}`);
      }
      assert.deepEqual(await counter('prepared-shared'), { count: 4 });
      // A transaction that throws takes its prepared writes with it.
      await assert.rejects(
        transact(port, async (trx) => {
          await counters.hit(trx, 'prepared-rolled-back', expires);
          throw new Error('after the write');
        }),
        /after the write/,
      );
      assert.equal(await counter('prepared-rolled-back'), undefined);
    });

    test('a write of a table the lookup cache holds cannot be prepared (it would empty the cache once)', async () => {
      const revoke = prepare((db) => db.updateTable('tokens').set({ revoked_at: numberArg(0) }));
      await assert.rejects(
        transact(port, (trx) => revoke(trx, Date.now())),
        /a write of a table the lookup cache holds cannot be prepared: update "tokens"/,
      );
      await assert.rejects(revoke(database.db, Date.now()), /cannot be prepared/);
      // Its last-use stamp is not a change the cache cares about, and other tables are free.
      const stamp = prepare((db) => db.updateTable('tokens').set({ last_used_at: numberArg(0) }));
      await transact(port, (trx) => stamp(trx, Date.now()));
    });

    /** The transaction a unit ran in, as PostgreSQL numbers it (units of one batch share it). */
    const transactionOf = async (trx: Parameters<Parameters<typeof transact>[1]>[0]) =>
      engine.name === 'postgres'
        ? (await sql<{ id: string }>`select txid_current()::text as id`.execute(trx)).rows[0].id
        : 'one writer';

    test('a member’s writes past two under way wait and go as one batch; other members’ are not held back', async () => {
      const sameMember = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          inLane('member:busy', () =>
            transact(port, async (trx) => {
              await insert(`busy-${i}`)(trx);
              return transactionOf(trx);
            }),
          ),
        ),
      );
      const members = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          inLane(`member:${i}`, () =>
            transact(port, async (trx) => {
              await insert(`member-${i}`)(trx);
              return transactionOf(trx);
            }),
          ),
        ),
      );
      for (let i = 0; i < 12; i++) assert.deepEqual(await counter(`busy-${i}`), { count: 1 });
      for (let i = 0; i < 6; i++) assert.deepEqual(await counter(`member-${i}`), { count: 1 });
      if (engine.name === 'postgres') {
        // Two alone, the ten that waited together.
        assert.equal(new Set(sameMember).size, 3, sameMember.join(' '));
        assert.equal(new Set(members).size, 6, members.join(' '));
      }
    });

    test('two processes’ batches of one lane taking the same rows in opposite orders take turns', async () => {
      // A second process's batcher: its own connection (pool) to the database.
      const other = openDatabase(target.url);
      const batching = { writes: new WriteBatcher(database, { unbatchedPerLane: 0 }) };
      const otherPort = { writes: new WriteBatcher(other, { unbatchedPerLane: 0 }) };
      const keys = Array.from({ length: 10 }, (_, i) => `crossed-${i}`);
      for (const key of keys) await insert(key)(database.db as never);
      try {
        const started = performance.now();
        const results = await Promise.allSettled([
          ...keys.map((key) => inLane('member:same', () => transact(batching, bump(key)))),
          ...[...keys].reverse().map((key) => inLane('member:same', () => transact(otherPort, bump(key)))),
        ]);
        const elapsed = performance.now() - started;
        assert.deepEqual(
          results.filter((result) => result.status === 'rejected').map((result) => String(result.reason)),
          [],
        );
        for (const key of keys) assert.deepEqual(await counter(key), { count: 3 });
        // Without the lane's lock PostgreSQL would break a lock cycle after deadlock_timeout (1 s).
        assert.ok(elapsed < 900, `took ${elapsed.toFixed(0)} ms`);
      } finally {
        await other.close();
      }
    });

    // PostgreSQL only: the embedded engine has one writer, so two transactions never hold locks at once.
    if (engine.name === 'postgres')
      test('batches of two lanes that close a lock cycle: the losing unit goes in a next batch, all commit', async () => {
        const other = openDatabase(target.url);
        const batching = { writes: new WriteBatcher(database, { unbatchedPerLane: 0 }) };
        const otherPort = { writes: new WriteBatcher(other, { unbatchedPerLane: 0 }) };
        for (const key of ['cycle-x', 'cycle-y', 'cycle-after']) await insert(key)(database.db as never);
        // Each side's first unit takes its row, then waits until the other side has taken its own.
        let arrived = 0;
        let bothHold: () => void = () => {};
        const barrier = new Promise<void>((resolve) => {
          bothHold = resolve;
        });
        const holdThenWait = (key: string) => async (trx: Parameters<Parameters<typeof transact>[1]>[0]) => {
          await bump(key)(trx);
          if (++arrived === 2) bothHold();
          await barrier;
        };
        try {
          const started = performance.now();
          const results = await Promise.allSettled([
            inLane('member:first', () => transact(batching, holdThenWait('cycle-x'))),
            inLane('member:first', () => transact(batching, bump('cycle-y'))),
            inLane('member:first', () => transact(batching, bump('cycle-after'))),
            inLane('member:second', () => transact(otherPort, holdThenWait('cycle-y'))),
            inLane('member:second', () => transact(otherPort, bump('cycle-x'))),
          ]);
          const elapsed = performance.now() - started;
          assert.deepEqual(
            results.filter((result) => result.status === 'rejected').map((result) => String(result.reason)),
            [],
          );
          assert.deepEqual(await counter('cycle-x'), { count: 3 });
          assert.deepEqual(await counter('cycle-y'), { count: 3 });
          assert.deepEqual(await counter('cycle-after'), { count: 2 });
          // One cycle, broken once (PostgreSQL's deadlock_timeout is 1 s).
          assert.ok(elapsed < 3000, `took ${elapsed.toFixed(0)} ms`);
        } finally {
          await other.close();
        }
      });

    if (engine.name === 'postgres')
      test('a unit that keeps losing races is answered 503 after three batches; the rest of its batch commits', {
        timeout: 15_000,
      }, async () => {
        const batching = { writes: new WriteBatcher(database, { unbatchedPerLane: 0 }) };
        for (const key of ['race-before', 'race-after']) await insert(key)(database.db as never);
        let attempts = 0;
        const alwaysLoses = async (trx: Parameters<Parameters<typeof transact>[1]>[0]) => {
          attempts++;
          await sql`do $$ begin raise exception 'lost again' using errcode = '40001'; end $$`.execute(trx);
        };
        const results = await Promise.allSettled([
          inLane('member:racing', () => transact(batching, bump('race-before'))),
          inLane('member:racing', () => transact(batching, alwaysLoses)),
          inLane('member:racing', () => transact(batching, bump('race-after'))),
        ]);
        assert.deepEqual(
          results.map((result) => result.status),
          ['fulfilled', 'rejected', 'fulfilled'],
        );
        const refused = (results[1] as PromiseRejectedResult).reason as { code?: string };
        assert.equal(refused.code, '40001');
        assert.equal(attempts, 3);
        const answer = toApiError(refused);
        assert.equal(answer.status, 503);
        assert.equal(answer.body().error, 'service_unavailable');
        assert.equal(answer.headers()['retry-after'], '2');
        // Each neighbour committed once: the batches before the refusal did not run them twice.
        assert.deepEqual(await counter('race-before'), { count: 2 });
        assert.deepEqual(await counter('race-after'), { count: 2 });
      });
  });
}
