// The highlights repository's contract: the same calls give the same rows on both engines.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { highlights, type PendingStory } from '../../src/storage/highlights.ts';
import { engines } from '../support/databases.ts';
import { storageUnderTest } from '../support/storage.ts';

const DAY = 86_400_000;

for (const engine of engines) {
  describe(`highlights repository (${engine.name})`, { skip: engine.skip }, () => {
    const storage = storageUnderTest(engine.name);
    const story = (id: string, memberId: string, now: number, text = 'a story'): PendingStory => ({
      id,
      memberId,
      tokenId: 'tok_1',
      story: JSON.stringify({ id, text }),
      now,
      expiresAt: now + 7 * DAY,
    });

    test('a new id is written once; a taken one answers no row and keeps its holder', async () => {
      const ada = await storage.member('Ada');
      const now = storage.clock.now();
      assert.deepEqual(await highlights.insertPending(storage.db, story('first', ada, now)), [
        { id: 'first' },
      ]);
      assert.deepEqual(await highlights.insertPending(storage.db, story('first', ada, now + 1, 'other')), []);
      assert.deepEqual(await highlights.holderOf(storage.db, 'first'), {
        member_id: ada,
        status: 'pending',
        expires_at: now + 7 * DAY,
      });
      assert.equal(await highlights.holderOf(storage.db, 'nobody'), undefined);
      assert.equal(await highlights.memberOf(storage.db, 'first'), ada);
    });

    test('refresh keeps the submission time; a resubmission starts again', async () => {
      const bo = await storage.member('Bo');
      const now = storage.clock.now();
      await highlights.insertPending(storage.db, story('refreshed', bo, now));
      await highlights.refreshPending(storage.db, story('refreshed', bo, now + 10, 'newer'));
      const [refreshed] = (await highlights.page(storage.db, undefined, { limit: 100 }, 'desc')).rows.filter(
        (row) => row.id === 'refreshed',
      );
      assert.equal(Number(refreshed.submitted_at), now);
      assert.equal(Number(refreshed.updated_at), now + 10);
      assert.equal(JSON.parse(refreshed.story).text, 'newer');
      await highlights.decide(storage.db, 'refreshed', { status: 'rejected', by: 'op', now: now + 20 });
      await highlights.resubmit(storage.db, story('refreshed', bo, now + 30));
      const row = await highlights.statusOf(storage.db, 'refreshed');
      assert.equal(row?.status, 'rejected', 'a resubmission leaves the status to the rule that calls it');
      const [again] = (await highlights.page(storage.db, undefined, { limit: 100 }, 'desc')).rows.filter(
        (r) => r.id === 'refreshed',
      );
      assert.equal(Number(again.submitted_at), now + 30);
      assert.equal(again.decided_at, null);
      assert.equal(again.decided_by, null);
    });

    test('counts and decisions see only stories still pending at the time given', async () => {
      const cy = await storage.member('Cy');
      const now = storage.clock.now();
      await highlights.insertPending(storage.db, story('cy-1', cy, now));
      await highlights.insertPending(storage.db, story('cy-2', cy, now));
      await highlights.insertPending(storage.db, { ...story('cy-old', cy, now), expiresAt: now + 5 });
      assert.equal(await highlights.countPending(storage.db, cy, now), 3);
      assert.equal(await highlights.countPending(storage.db, cy, now + 5), 2);
      assert.equal(
        await highlights.decide(storage.db, 'cy-old', { status: 'active', by: 'op', now: now + 5 }),
        false,
      );
      assert.equal(
        await highlights.decide(storage.db, 'cy-1', { status: 'active', by: 'op', now: now + 6 }),
        true,
      );
      assert.equal(
        await highlights.decide(storage.db, 'cy-1', { status: 'rejected', by: 'op', now: now + 7 }),
        false,
      );
      assert.deepEqual(await highlights.operatorView(storage.db, 'cy-1'), {
        id: 'cy-1',
        member_id: cy,
        status: 'active',
      });
      assert.equal(await highlights.countPending(storage.db, cy, now + 6), 1);
    });

    test('pages by submission time in either direction, approved ones by decision time', async () => {
      const di = await storage.member('Di');
      const start = storage.clock.now() + DAY;
      for (let i = 0; i < 5; i++) await highlights.insertPending(storage.db, story(`di-${i}`, di, start + i));
      await highlights.decide(storage.db, 'di-3', { status: 'active', by: 'op', now: start + 100 });
      await highlights.decide(storage.db, 'di-1', { status: 'active', by: 'op', now: start + 200 });
      const first = await highlights.page(storage.db, 'pending', { limit: 2 }, 'desc');
      assert.deepEqual(
        first.rows.map((row) => row.id),
        ['di-4', 'di-2'],
      );
      const second = await highlights.page(
        storage.db,
        'pending',
        { limit: 2, after: first.next ?? undefined },
        'desc',
      );
      assert.equal(second.rows[0].id, 'di-0');
      const oldest = await highlights.page(storage.db, 'active', { limit: 10 }, 'asc');
      assert.deepEqual(
        oldest.rows.filter((row) => row.id.startsWith('di-')).map((row) => row.id),
        ['di-1', 'di-3'],
      );
      const approved = await highlights.pageApproved(storage.db, { limit: 10 });
      assert.deepEqual(
        approved.rows
          .filter((row) => row.id.startsWith('di-'))
          .map((row) => [row.id, Number(row.decided_at)]),
        [
          ['di-1', start + 200],
          ['di-3', start + 100],
        ],
      );
    });

    test('a new story with its quota in one round trip where the engine can, else nothing written', async () => {
      const ed = await storage.member('Ed');
      const now = storage.clock.now();
      const quota = { key: 'quota:ed', expiresAt: now + DAY, limit: 2 };
      const counted = async () =>
        Number(
          (
            await storage.db
              .selectFrom('counters')
              .select('count')
              .where('key', '=', quota.key)
              .executeTakeFirst()
          )?.count ?? 0,
        );
      if (!highlights.writesNewInOneRoundTrip(storage.db)) {
        assert.equal(engine.name, 'sqlite');
        return;
      }
      assert.equal(await highlights.insertNewSpendingQuota(storage.port, story('ed-1', ed, now), quota), 1);
      assert.equal(
        await highlights.insertNewSpendingQuota(storage.port, story('ed-1', ed, now), quota),
        undefined,
      );
      assert.equal(await counted(), 1, 'a taken id spends nothing');
      assert.equal(await highlights.insertNewSpendingQuota(storage.port, story('ed-2', ed, now), quota), 2);
      assert.equal(
        await highlights.insertNewSpendingQuota(storage.port, story('ed-3', ed, now), quota),
        undefined,
      );
      assert.equal(await counted(), 2, 'a spent quota stays spent');
      assert.equal(await highlights.holderOf(storage.db, 'ed-3'), undefined, 'and its story is not written');
    });
  });
}
