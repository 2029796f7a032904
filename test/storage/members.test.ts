// The members repository's contract: the same calls give the same rows on both engines.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { members } from '../../src/storage/members.ts';
import { engines } from '../support/databases.ts';
import { storageUnderTest } from '../support/storage.ts';

for (const engine of engines) {
  describe(`members repository (${engine.name})`, { skip: engine.skip }, () => {
    const storage = storageUnderTest(engine.name);
    const row = (id: string, email: string, createdAt: number) => ({
      id,
      email,
      name: `Name ${id}`,
      handle: `handle-${id}`,
      tier: 'member',
      created_at: createdAt,
      updated_at: createdAt,
    });

    test('a member added is found by id and by address; an unknown one is undefined', async () => {
      await members.add(storage.db, row('mem_a', 'a@example.org', 10));
      assert.deepEqual(await members.byId(storage.db, 'mem_a'), row('mem_a', 'a@example.org', 10));
      assert.equal((await members.byEmail(storage.db, 'a@example.org'))?.id, 'mem_a');
      assert.equal(await members.byId(storage.db, 'mem_none'), undefined);
      assert.equal(await members.byEmail(storage.db, 'none@example.org'), undefined);
    });

    test('pages list oldest first, ties by id, each page at most its size, chained by the cursor', async () => {
      await members.add(storage.db, row('mem_c', 'c@example.org', 5));
      await members.add(storage.db, row('mem_b', 'b@example.org', 5));
      const first = await members.page(storage.db, { limit: 2 });
      assert.deepEqual(
        first.rows.map((member) => member.id),
        ['mem_b', 'mem_c'],
      );
      assert.ok(first.next);
      const second = await members.page(storage.db, { limit: 2, after: first.next });
      assert.deepEqual(
        second.rows.map((member) => member.id),
        ['mem_a'],
      );
      assert.equal(second.next, null);
    });

    test('setTier changes the tier and the update time; false for no such member', async () => {
      assert.equal(await members.setTier(storage.db, 'mem_a', 'steward', 99), true);
      const changed = await members.byId(storage.db, 'mem_a');
      assert.equal(changed?.tier, 'steward');
      assert.equal(changed?.updated_at, 99);
      assert.equal(await members.setTier(storage.db, 'mem_none', 'steward', 99), false);
    });

    test('the operator views carry only their columns', async () => {
      assert.deepEqual(await members.tierView(storage.db, 'mem_a'), {
        id: 'mem_a',
        name: 'Name mem_a',
        tier: 'steward',
      });
      assert.deepEqual(await members.invitationView(storage.db, 'b@example.org'), {
        id: 'mem_b',
        name: 'Name mem_b',
        email: 'b@example.org',
        tier: 'member',
      });
      assert.equal(await members.tierView(storage.db, 'mem_none'), undefined);
    });

    test('the reads of several members: ids by tier, names and tiers by id, none for none', async () => {
      assert.deepEqual(await members.idsWithTier(storage.db, ['steward']), ['mem_a']);
      assert.deepEqual((await members.idsWithTier(storage.db, ['member', 'steward'])).sort(), [
        'mem_a',
        'mem_b',
        'mem_c',
      ]);
      assert.deepEqual(await members.idsWithTier(storage.db, []), []);
      const labels = await members.labels(storage.db, ['mem_b', 'mem_a', 'mem_none']);
      assert.deepEqual(
        labels.sort((x, y) => x.id.localeCompare(y.id)),
        [
          { id: 'mem_a', name: 'Name mem_a', tier: 'steward' },
          { id: 'mem_b', name: 'Name mem_b', tier: 'member' },
        ],
      );
      assert.deepEqual(await members.labels(storage.db, []), []);
    });

    test("nameAndHandle reads what the directory's index holds; no such member throws", async () => {
      assert.deepEqual(await members.nameAndHandle(storage.db, 'mem_b'), {
        name: 'Name mem_b',
        handle: 'handle-mem_b',
      });
      await assert.rejects(members.nameAndHandle(storage.db, 'mem_none'));
    });
  });
}
