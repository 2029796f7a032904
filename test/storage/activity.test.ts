// The activity repository's contract: the same calls give the same rows on both engines.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type ActivityRow, activity, activityIdPrefix } from '../../src/storage/activity.ts';
import { transact } from '../../src/storage/transactions.ts';
import { engines } from '../support/databases.ts';
import { storageUnderTest } from '../support/storage.ts';

const DAY = 86_400_000;

for (const engine of engines) {
  describe(`activity repository (${engine.name})`, { skip: engine.skip }, () => {
    const storage = storageUnderTest(engine.name);
    const call = (memberId: string, at: number, operation: string, status = 200): ActivityRow => ({
      memberId,
      operation,
      surface: 'rest',
      tokenPrefix: 'ac_abc',
      status,
      outcome: status < 400 ? 'ok' : 'refused',
      at,
    });
    let n = 0;
    const idAt = (at: number) => `${activityIdPrefix(at)}${String(++n).padStart(10, '0')}`;

    test('ids sort by time: the prefix is the time in base 36, ten characters', () => {
      assert.equal(activityIdPrefix(0), '0000000000');
      assert.ok(activityIdPrefix(Date.UTC(2026, 0, 1)) < activityIdPrefix(Date.UTC(2026, 0, 2)));
      assert.equal(activityIdPrefix(Date.UTC(2026, 0, 1)).length, 10);
    });

    test('rows written in a transaction (deferred on PostgreSQL) commit with it; newest first', async () => {
      const ada = await storage.member('Ada');
      const now = storage.clock.now();
      const first = idAt(now);
      await transact(storage.port, async (trx) => {
        await activity.insert(trx, first, call(ada, now, 'a'));
        await activity.insert(trx, idAt(now + 1), call(ada, now + 1, 'b'));
      });
      await activity.correct(storage.db, first, { status: 500, outcome: 'internal' });
      const rows = await activity.recent(storage.db, ada, 10);
      assert.deepEqual(
        rows.map((row) => [row.operation, Number(row.status), row.outcome, Number(row.at)]),
        [
          ['b', 200, 'ok', now + 1],
          ['a', 500, 'internal', now],
        ],
      );
      assert.equal((await activity.recent(storage.db, ada, 1)).length, 1);
    });

    test('a rolled-back transaction keeps no row, deferred or not', async () => {
      const bo = await storage.member('Bo');
      await assert.rejects(
        transact(storage.port, async (trx) => {
          await activity.insert(trx, idAt(storage.clock.now()), call(bo, storage.clock.now(), 'x'));
          throw new Error('undone');
        }),
        /undone/,
      );
      assert.deepEqual(await activity.recent(storage.db, bo, 10), []);
    });

    test('per day and surface, and the busiest operations, since a time', async () => {
      const cy = await storage.member('Cy');
      const day = Math.floor(storage.clock.now() / DAY) * DAY + 10 * DAY;
      for (const [at, operation, status] of [
        [day + 1, 'p', 200],
        [day + 2, 'p', 429],
        [day + 3, 'q', 200],
        [day + DAY + 1, 'p', 200],
      ] as const)
        await activity.insert(storage.db, idAt(at), call(cy, at, operation, status));
      const days = await activity.byDay(storage.db, day);
      assert.deepEqual(
        days.sort((a, b) => a.day - b.day),
        [
          { day: day / DAY, surface: 'rest', requests: 3, refusals: 1 },
          { day: day / DAY + 1, surface: 'rest', requests: 1, refusals: 0 },
        ],
      );
      assert.deepEqual(await activity.busiest(storage.db, day, 5), [
        { operation: 'p', calls: 3, refusals: 1 },
        { operation: 'q', calls: 1, refusals: 0 },
      ]);
      assert.deepEqual(await activity.busiest(storage.db, day, 1), [
        { operation: 'p', calls: 3, refusals: 1 },
      ]);
    });
  });
}
