// The leaderboard repository's contract: the same calls give the same rows on both engines.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { leaderboard } from '../../src/storage/leaderboard.ts';
import { engines } from '../support/databases.ts';
import { storageUnderTest } from '../support/storage.ts';

const WEEK = 1_000_000;

for (const engine of engines) {
  describe(`leaderboard repository (${engine.name})`, { skip: engine.skip }, () => {
    const storage = storageUnderTest(engine.name);

    test('counts by commits with ties by handle, ranks kept on a recount, the board by rank', async () => {
      const [ada, bo, cy] = [
        await storage.member('Ada'),
        await storage.member('Bo'),
        await storage.member('Cy'),
      ];
      await leaderboard.upsertCount(storage.db, WEEK, cy, 5, 1);
      await leaderboard.upsertCount(storage.db, WEEK, bo, 9, 1);
      await leaderboard.upsertCount(storage.db, WEEK, ada, 5, 1);
      assert.deepEqual(
        (await leaderboard.byCommits(storage.db, WEEK)).map((row) => [
          row.member_id,
          Number(row.commits),
          Number(row.rank),
        ]),
        [
          [bo, 9, 0],
          [ada, 5, 0],
          [cy, 5, 0],
        ],
      );
      for (const [id, rank] of [
        [bo, 1],
        [ada, 2],
        [cy, 2],
      ] as const)
        await leaderboard.setRank(storage.db, WEEK, id, rank);
      await leaderboard.upsertCount(storage.db, WEEK, cy, 6, 2);
      assert.deepEqual(
        await leaderboard
          .countOf(storage.db, WEEK, cy)
          .then((row) => row && [Number(row.commits), Number(row.rank)]),
        [6, 2],
      );
      assert.deepEqual(
        (await leaderboard.board(storage.db, WEEK)).map((row) => [Number(row.rank), row.name]),
        [
          [1, 'Bo'],
          [2, 'Ada'],
          [2, 'Cy'],
        ],
      );
      assert.equal(await leaderboard.entries(storage.db, WEEK), 3);
      await leaderboard.upsertCount(storage.db, 2 * WEEK, ada, 1, 3);
      await leaderboard.removeMember(storage.db, ada);
      assert.equal(await leaderboard.entries(storage.db, WEEK), 2);
      assert.equal(await leaderboard.entries(storage.db, 2 * WEEK), 0);
    });

    test("a week's run is recorded and replaced; the scheduled run's lease goes to one caller", async () => {
      assert.equal(await leaderboard.run(storage.db, WEEK), undefined);
      await leaderboard.recordRun(storage.db, WEEK, 10, 1);
      await leaderboard.recordRun(storage.db, WEEK, 20, 0);
      const run = await leaderboard.run(storage.db, WEEK);
      assert.deepEqual([Number(run?.generated_at), Number(run?.failed)], [20, 0]);
      assert.equal(await leaderboard.leaseRun(storage.db, 100, 200), true);
      assert.equal(await leaderboard.leaseRun(storage.db, 150, 300), false);
      assert.equal(await leaderboard.leaseRun(storage.db, 200, 400), true);
    });
  });
}
