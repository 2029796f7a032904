// The payments repositories' contract: the same calls give the same rows on both engines.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { donations, settlements } from '../../src/storage/payments.ts';
import type { PaymentSettlementsTable } from '../../src/storage/schema.ts';
import { engines } from '../support/databases.ts';
import { storageUnderTest } from '../support/storage.ts';

for (const engine of engines) {
  describe(`payments repositories (${engine.name})`, { skip: engine.skip }, () => {
    const storage = storageUnderTest(engine.name);
    const claim = (key: string, leaseUntil: number, createdAt = 1): PaymentSettlementsTable => ({
      payment_key: key,
      state: 'settling',
      payment: '{}',
      requirements: '{}',
      donation: '{}',
      attempts: 1,
      lease_until: leaseUntil,
      outcome: null,
      created_at: createdAt,
      updated_at: createdAt,
    });

    test('a payment is claimed once; recorded, failed and released claims', async () => {
      assert.equal(await settlements.claim(storage.db, claim('p1', 100)), true);
      assert.equal(await settlements.claim(storage.db, claim('p1', 200)), false);
      assert.deepEqual(await settlements.stateOf(storage.db, 'p1'), { state: 'settling', outcome: null });
      await settlements.markRecorded(storage.db, 'p1', 'settled', 5);
      await settlements.markFailed(storage.db, 'p1', 'late', 6);
      assert.deepEqual(await settlements.stateOf(storage.db, 'p1'), {
        state: 'recorded',
        outcome: 'settled',
      });
      await settlements.removeSettling(storage.db, 'p1');
      assert.ok(await settlements.stateOf(storage.db, 'p1'), 'a recorded claim is not released');
      await settlements.claim(storage.db, claim('p2', 100));
      await settlements.markFailed(storage.db, 'p2', 'refused', 6);
      assert.equal((await settlements.stateOf(storage.db, 'p2'))?.state, 'failed');
      await settlements.claim(storage.db, claim('p3', 100));
      await settlements.removeSettling(storage.db, 'p3');
      assert.equal(await settlements.stateOf(storage.db, 'p3'), undefined);
    });

    test('expired leases are taken over once, counting an attempt; the settling count', async () => {
      await settlements.claim(storage.db, claim('e1', 1000, 10));
      await settlements.claim(storage.db, claim('e2', 3000, 20));
      assert.deepEqual(await settlements.settling(storage.db), { count: 2, next: 1000 });
      const expired = await settlements.expired(storage.db, 2000, 10);
      assert.deepEqual(
        expired.map((row) => [row.payment_key, Number(row.lease_until)]),
        [['e1', 1000]],
      );
      assert.equal(await settlements.takeOver(storage.db, 'e1', 1000, 9000, 2000), true);
      assert.equal(await settlements.takeOver(storage.db, 'e1', 1000, 9500, 2000), false);
      const row = await settlements.get(storage.db, 'e1');
      assert.deepEqual([Number(row.attempts), Number(row.lease_until)], [2, 9000]);
      await assert.rejects(settlements.get(storage.db, 'none'));
    });

    test('donations: one per payment, totals and the public wall', async () => {
      const base = {
        message: null,
        source: 'x402',
        network: null,
        asset: null,
        amount_atomic: null,
        payer: null,
      };
      assert.deepEqual(await donations.totals(storage.db), { cents: 0, donors: 0 });
      await donations.insert(storage.db, {
        id: 'd1',
        donor_name: 'Ada',
        amount_cents: 500,
        public: 1,
        created_at: 1,
        member_id: null,
        transaction_ref: '0xabc',
        payment_key: 'k1',
        ...base,
      });
      await donations.insert(storage.db, {
        id: 'd2',
        donor_name: 'Ada',
        amount_cents: 250,
        public: 0,
        created_at: 2,
        member_id: null,
        transaction_ref: null,
        payment_key: 'k2',
        ...base,
      });
      await donations.insert(storage.db, {
        id: 'd3',
        donor_name: 'Bo',
        amount_cents: 100,
        public: 1,
        created_at: 3,
        member_id: null,
        transaction_ref: null,
        payment_key: 'k3',
        ...base,
      });
      assert.deepEqual(await donations.totals(storage.db), { cents: 850, donors: 2 });
      assert.deepEqual(
        (await donations.recentPublic(storage.db, 5)).map((row) => row.donor_name),
        ['Bo', 'Ada'],
      );
      const found = await donations.fromPayment(storage.db, 'k1');
      assert.deepEqual([found?.id, Number(found?.created_at), found?.transaction_ref], ['d1', 1, '0xabc']);
      assert.equal(await donations.fromPayment(storage.db, 'k9'), undefined);
    });
  });
}
