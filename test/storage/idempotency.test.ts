// The idempotency repository's contract: the same calls give the same rows on both engines.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { idempotency } from '../../src/storage/idempotency.ts';
import { engines } from '../support/databases.ts';
import { storageUnderTest } from '../support/storage.ts';

for (const engine of engines) {
  describe(`idempotency repository (${engine.name})`, { skip: engine.skip }, () => {
    const storage = storageUnderTest(engine.name);
    const claim = (keyHash: string, now = 1000) => ({
      keyHash,
      fingerprint: 'f',
      now,
      expiresAt: now + 60_000,
    });

    test('a key is claimed once; the claim reads back in flight', async () => {
      assert.equal(await idempotency.claim(storage.db, claim('k1')), true);
      assert.equal(await idempotency.claim(storage.db, claim('k1', 2000)), false);
      const row = await idempotency.find(storage.db, 'k1');
      assert.deepEqual(
        { ...row, created_at: Number(row?.created_at), expires_at: Number(row?.expires_at) },
        {
          key_hash: 'k1',
          fingerprint: 'f',
          state: 'in_flight',
          status: null,
          headers: null,
          body: null,
          created_at: 1000,
          expires_at: 61_000,
        },
      );
      assert.equal(await idempotency.find(storage.db, 'none'), undefined);
    });

    test('applied, then done with its answer; only an in-flight claim is marked applied', async () => {
      await idempotency.claim(storage.db, claim('k2'));
      await idempotency.markApplied(storage.db, 'k2');
      assert.equal((await idempotency.find(storage.db, 'k2'))?.state, 'applied');
      await idempotency.complete(storage.db, 'k2', { status: 201, headers: '{}', body: '{"ok":true}' });
      await idempotency.markApplied(storage.db, 'k2');
      const row = await idempotency.find(storage.db, 'k2');
      assert.deepEqual(
        [row?.state, row?.status, row?.headers, row?.body],
        ['done', 201, '{}', '{"ok":true}'],
      );
    });

    test('release removes an in-flight claim, or any claim when told; a stale one goes by its time', async () => {
      await idempotency.claim(storage.db, claim('k3'));
      await idempotency.markApplied(storage.db, 'k3');
      await idempotency.release(storage.db, 'k3', true);
      assert.ok(await idempotency.find(storage.db, 'k3'), 'an applied claim stays');
      await idempotency.release(storage.db, 'k3', false);
      assert.equal(await idempotency.find(storage.db, 'k3'), undefined);
      await idempotency.claim(storage.db, claim('k4', 5000));
      await idempotency.removeClaimMadeAt(storage.db, 'k4', 4000);
      assert.ok(await idempotency.find(storage.db, 'k4'), 'a later claim is not removed');
      await idempotency.removeClaimMadeAt(storage.db, 'k4', 5000);
      assert.equal(await idempotency.find(storage.db, 'k4'), undefined);
    });
  });
}
