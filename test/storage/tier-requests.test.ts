// The tier requests repository's contract: the same calls give the same rows on both engines.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { members } from '../../src/storage/members.ts';
import type { TierRequestsTable } from '../../src/storage/schema.ts';
import { tierRequests } from '../../src/storage/tier-requests.ts';
import { engines } from '../support/databases.ts';
import { storageUnderTest } from '../support/storage.ts';

for (const engine of engines) {
  describe(`tier requests repository (${engine.name})`, { skip: engine.skip }, () => {
    const storage = storageUnderTest(engine.name);
    const request = (id: string, memberId: string, at: number, status = 'pending'): TierRequestsTable => ({
      id,
      member_id: memberId,
      tier: 'resident',
      note: `note ${id}`,
      status,
      created_at: at,
      decided_at: null,
      decided_by: null,
      granted_tier: null,
      reason: null,
    });

    test("a member's requests come newest first, ties by id", async () => {
      const member = await storage.member('Ada');
      await tierRequests.add(storage.db, request('treq_a', member, 10, 'denied'));
      await tierRequests.add(storage.db, request('treq_c', member, 20, 'cancelled'));
      await tierRequests.add(storage.db, request('treq_b', member, 20));
      const rows = await tierRequests.ofMember(storage.db, member);
      assert.deepEqual(
        rows.map((row) => row.id),
        ['treq_c', 'treq_b', 'treq_a'],
      );
      assert.deepEqual({ ...rows[1], created_at: Number(rows[1].created_at) }, request('treq_b', member, 20));
      assert.equal((await tierRequests.byId(storage.db, 'treq_a'))?.status, 'denied');
      assert.equal(await tierRequests.byId(storage.db, 'treq_none'), undefined);
    });

    test('endPending ends only the pending request, once', async () => {
      const member = await storage.member('Bo');
      await tierRequests.add(storage.db, request('treq_p', member, 30));
      await tierRequests.add(storage.db, request('treq_q', member, 31, 'denied'));
      assert.equal(await tierRequests.endPending(storage.db, member, 'superseded', 40), true);
      assert.equal(await tierRequests.endPending(storage.db, member, 'cancelled', 41), false);
      const ended = await tierRequests.byId(storage.db, 'treq_p');
      assert.equal(ended?.status, 'superseded');
      assert.equal(Number(ended?.decided_at), 40);
      assert.equal((await tierRequests.byId(storage.db, 'treq_q'))?.decided_at, null);
    });

    test('decidePending answers a pending request once', async () => {
      const member = await storage.member('Cy');
      await tierRequests.add(storage.db, request('treq_d', member, 50));
      const decision = {
        status: 'approved',
        decided_at: 60,
        decided_by: 'mem_operator',
        granted_tier: 'core',
        reason: null,
      };
      assert.equal(await tierRequests.decidePending(storage.db, 'treq_d', decision), true);
      assert.equal(await tierRequests.decidePending(storage.db, 'treq_d', decision), false);
      const decided = await tierRequests.byId(storage.db, 'treq_d');
      assert.equal(decided?.granted_tier, 'core');
      assert.equal(decided?.decided_by, 'mem_operator');
      await members.setTier(storage.db, member, 'core', 60);
      assert.deepEqual(await tierRequests.decisionView(storage.db, 'treq_d'), {
        id: 'treq_d',
        member_id: member,
        tier: 'resident',
        status: 'approved',
        granted_tier: 'core',
        reason: null,
        member_tier: 'core',
      });
      assert.equal(await tierRequests.decisionView(storage.db, 'treq_none'), undefined);
    });

    test('page lists one status oldest first, a page at a time', async () => {
      const member = await storage.member('Di');
      for (let i = 0; i < 3; i++)
        await tierRequests.add(storage.db, request(`treq_w${i}`, member, 100 + i, 'waiting'));
      const first = await tierRequests.page(storage.db, 'waiting', { limit: 2 });
      assert.deepEqual(
        first.rows.map((row) => row.id),
        ['treq_w0', 'treq_w1'],
      );
      const rest = await tierRequests.page(storage.db, 'waiting', {
        limit: 2,
        after: first.next ?? undefined,
      });
      assert.deepEqual(
        rest.rows.map((row) => row.id),
        ['treq_w2'],
      );
      assert.equal(rest.next, null);
    });
  });
}
