// The sessions repository's contract: the same calls give the same rows on both engines.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sessions } from '../../src/storage/sessions.ts';
import { engines } from '../support/databases.ts';
import { storageUnderTest } from '../support/storage.ts';

for (const engine of engines) {
  describe(`sessions repository (${engine.name})`, { skip: engine.skip }, () => {
    const storage = storageUnderTest(engine.name);

    test('a session inserted is found by its hash with its member; an unknown hash is undefined', async () => {
      const ada = await storage.member('Ada');
      await sessions.insert(storage.db, {
        id_hash: 'ses-hash',
        member_id: ada,
        created_at: 10,
        expires_at: 1000,
        revoked_at: null,
      });
      const found = await sessions.withMemberByHash(storage.db, 'ses-hash');
      assert.deepEqual(
        { ...found, email: undefined },
        {
          id: ada,
          name: 'Ada',
          email: undefined,
          tier: 'member',
          expires_at: 1000,
          revoked_at: null,
        },
      );
      assert.match(found?.email ?? '', /@example\.org$/);
      assert.equal(await sessions.withMemberByHash(storage.db, 'none'), undefined);
    });

    test('revoke records when; the session is still found, revoked', async () => {
      await sessions.revoke(storage.db, 'ses-hash', 20);
      assert.equal((await sessions.withMemberByHash(storage.db, 'ses-hash'))?.revoked_at, 20);
      await sessions.revoke(storage.db, 'none', 20);
    });
  });
}
