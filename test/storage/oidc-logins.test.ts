// The OIDC logins repository's contract: the same calls give the same answers on both engines.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { oidcLogins } from '../../src/storage/oidc-logins.ts';
import { engines } from '../support/databases.ts';
import { storageUnderTest } from '../support/storage.ts';

for (const engine of engines) {
  describe(`OIDC logins repository (${engine.name})`, { skip: engine.skip }, () => {
    const storage = storageUnderTest(engine.name);
    const login = (state: string, expiresAt: number) => ({
      state_hash: state,
      browser_hash: `browser-${state}`,
      next_path: `/next/${state}`,
      created_at: 0,
      expires_at: expiresAt,
      used_at: null,
    });

    test('a login is spent once, in its browser, before its end', async () => {
      await oidcLogins.insert(storage.db, login('st-a', 100));
      assert.equal(await oidcLogins.spend(storage.db, 'st-a', 'browser-other', 50), undefined);
      assert.equal(await oidcLogins.spend(storage.db, 'st-a', 'browser-st-a', 100), undefined);
      assert.equal(await oidcLogins.spend(storage.db, 'st-a', 'browser-st-a', 50), '/next/st-a');
      assert.equal(await oidcLogins.spend(storage.db, 'st-a', 'browser-st-a', 51), undefined);
    });

    test('deleteEnded deletes the logins that ended by now', async () => {
      await oidcLogins.insert(storage.db, login('st-b', 200));
      await oidcLogins.insert(storage.db, login('st-c', 201));
      await oidcLogins.deleteEnded(storage.db, 200);
      const rows = await storage.db
        .selectFrom('oidc_logins')
        .select('state_hash')
        .orderBy('state_hash')
        .execute();
      assert.deepEqual(
        rows.map((row) => row.state_hash),
        ['st-c'],
      );
    });
  });
}
