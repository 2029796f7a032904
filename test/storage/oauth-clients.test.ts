// The OAuth clients repository's contract: the same calls give the same rows on both engines.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { oauthClients } from '../../src/storage/oauth-clients.ts';
import { engines } from '../support/databases.ts';
import { storageUnderTest } from '../support/storage.ts';

for (const engine of engines) {
  describe(`OAuth clients repository (${engine.name})`, { skip: engine.skip }, () => {
    const storage = storageUnderTest(engine.name);
    const client = (id: string, createdAt: number) => ({
      client_id: id,
      client_name: null,
      redirect_uris: '["https://app.example.org/cb"]',
      created_at: createdAt,
      used_at: null,
    });

    test('a client inserted is found by id; an unknown one is undefined', async () => {
      await oauthClients.insert(storage.db, client('mcpc_a', 10));
      assert.deepEqual(await oauthClients.byId(storage.db, 'mcpc_a'), client('mcpc_a', 10));
      assert.equal(await oauthClients.byId(storage.db, 'mcpc_none'), undefined);
    });

    test('markUsed keeps the first use', async () => {
      await oauthClients.markUsed(storage.db, 'mcpc_a', 20);
      await oauthClients.markUsed(storage.db, 'mcpc_a', 30);
      assert.equal((await oauthClients.byId(storage.db, 'mcpc_a'))?.used_at, 20);
    });

    test('deleteUnusedBefore deletes only unused registrations made before the time', async () => {
      await oauthClients.insert(storage.db, client('mcpc_b', 10));
      await oauthClients.insert(storage.db, client('mcpc_c', 15));
      await oauthClients.deleteUnusedBefore(storage.db, 15);
      assert.ok(await oauthClients.byId(storage.db, 'mcpc_a'));
      assert.equal(await oauthClients.byId(storage.db, 'mcpc_b'), undefined);
      assert.ok(await oauthClients.byId(storage.db, 'mcpc_c'));
    });
  });
}
