// The vcs-links repository's contract: the same calls give the same rows on both engines.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { VcsLinksTable } from '../../src/storage/schema.ts';
import { vcsLinks } from '../../src/storage/vcs-links.ts';
import { engines } from '../support/databases.ts';
import { storageUnderTest } from '../support/storage.ts';

for (const engine of engines) {
  describe(`vcs-links repository (${engine.name})`, { skip: engine.skip }, () => {
    const storage = storageUnderTest(engine.name);
    const link = (memberId: string, hostUserId: string, optedIn = 0): VcsLinksTable => ({
      member_id: memberId,
      host_user_id: hostUserId,
      username: `user-${hostUserId}`,
      source: 'token',
      verified_at: 1,
      opted_in: optedIn,
      private_counting: 0,
      updated_at: 1,
    });

    test('one link per member: written, found by member and host account, replaced, removed', async () => {
      const ada = await storage.member('Ada');
      await vcsLinks.insert(storage.db, link(ada, '11'));
      assert.equal(await vcsLinks.holderOf(storage.db, '11'), ada);
      assert.equal(await vcsLinks.holderOf(storage.db, '99'), undefined);
      await vcsLinks.replace(storage.db, link(ada, '12'));
      assert.equal((await vcsLinks.ofMember(storage.db, ada))?.host_user_id, '12');
      assert.equal(await vcsLinks.remove(storage.db, ada), true);
      assert.equal(await vcsLinks.remove(storage.db, ada), false);
      assert.equal(await vcsLinks.ofMember(storage.db, ada), undefined);
    });

    test('opt-in and the participants, by member id', async () => {
      const [bo, cy] = [await storage.member('Bo'), await storage.member('Cy')];
      await vcsLinks.insert(storage.db, link(cy, '21'));
      await vcsLinks.insert(storage.db, link(bo, '22'));
      await vcsLinks.setOptIn(storage.db, cy, true, 5);
      await vcsLinks.setOptIn(storage.db, bo, true, 5);
      assert.deepEqual(
        (await vcsLinks.optedIn(storage.db)).map((row) => row.member_id),
        [bo, cy].sort(),
      );
      await vcsLinks.setOptIn(storage.db, bo, false, 6);
      assert.deepEqual(await vcsLinks.optedIn(storage.db), [{ member_id: cy, username: 'user-21' }]);
      assert.equal(Number((await vcsLinks.ofMember(storage.db, bo))?.updated_at), 6);
    });
  });
}
