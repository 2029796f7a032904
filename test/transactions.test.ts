// The one transaction mechanism (storage/transactions.ts): work joins the transaction already open
// in its call, and a commit hook (the pipeline's activity row) commits with the call's first
// transaction or not at all.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { type Database, openDatabase } from '../src/storage/database.ts';
import { migrateToLatest } from '../src/storage/migrations.ts';
import { DEFERRED_WRITE } from '../src/storage/statement-groups.ts';
import { type CommitHook, transact, withCommitHook } from '../src/storage/transactions.ts';
import { WriteBatcher } from '../src/storage/write-batcher.ts';
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
          await sql`${sql.raw(DEFERRED_WRITE)}insert into counters (key, count, expires_at) values (${key}, 1, ${Date.now() + 60_000})`.execute(
            trx,
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

    test('a unit that fails at a statement or at its deferred write is rolled back alone (in a batch on the embedded engine)', async () => {
      await insert('taken')(database.db as never);
      const results = await Promise.allSettled(
        Array.from({ length: 12 }, (_, i) =>
          transact(port, async (trx) => {
            await insert(`batched-${i}`)(trx);
            if (i % 4 === 1) await insert('taken')(trx);
            // On PostgreSQL the deferred write travels with the COMMIT; its failure is the unit's.
            const key = i % 4 === 2 ? 'taken' : `batched-deferred-${i}`;
            await sql`${sql.raw(DEFERRED_WRITE)}insert into counters (key, count, expires_at) values (${key}, ${1}, ${Date.now() + 60_000})`.execute(
              trx,
            );
            return i;
          }),
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
  });
}
