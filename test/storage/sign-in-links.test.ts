// The sign-in links repository's contract (and the development outbox's kept key): the same calls
// give the same answers on both engines.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { devOutbox } from '../../src/storage/dev-outbox.ts';
import { members } from '../../src/storage/members.ts';
import { sessions } from '../../src/storage/sessions.ts';
import { signInLinks } from '../../src/storage/sign-in-links.ts';
import { engines } from '../support/databases.ts';
import { storageUnderTest } from '../support/storage.ts';

for (const engine of engines) {
  describe(`sign-in links repository (${engine.name})`, { skip: engine.skip }, () => {
    const storage = storageUnderTest(engine.name);
    const link = (hash: string, email: string, expiresAt: number, browserHash: string | null = null) => ({
      id_hash: hash,
      email,
      created_at: 0,
      expires_at: expiresAt,
      used_at: null,
      browser_hash: browserHash,
    });

    test('a link is spent once, only before its end; its address comes back', async () => {
      await signInLinks.insert(storage.db, link('sil-a', 'a@example.org', 100));
      await signInLinks.insert(storage.db, link('sil-b', 'b@example.org', 100));
      assert.equal(await signInLinks.spend(storage.db, 'sil-a', 50), 'a@example.org');
      assert.equal(await signInLinks.spend(storage.db, 'sil-a', 51), undefined);
      assert.equal(await signInLinks.spend(storage.db, 'sil-b', 100), undefined);
      assert.equal(await signInLinks.spend(storage.db, 'sil-none', 1), undefined);
    });

    test('spendInBrowser: only the asking browser spends it, once, before its end; askedFrom tells whose it is', async () => {
      await signInLinks.insert(storage.db, link('sil-d', 'd@example.org', 100, 'browser-d'));
      await signInLinks.insert(storage.db, link('sil-e', 'e@example.org', 100));
      assert.equal(await signInLinks.spendInBrowser(storage.db, 'sil-d', 'browser-x', 50), undefined);
      assert.equal(await signInLinks.spendInBrowser(storage.db, 'sil-d', 'browser-d', 100), undefined);
      assert.equal(await signInLinks.spendInBrowser(storage.db, 'sil-d', 'browser-d', 50), 'd@example.org');
      assert.equal(await signInLinks.spendInBrowser(storage.db, 'sil-d', 'browser-d', 51), undefined);
      assert.equal(
        await signInLinks.askedFrom(storage.db, 'sil-d', 'browser-d'),
        true,
        'spent, still its own',
      );
      assert.equal(await signInLinks.askedFrom(storage.db, 'sil-d', 'browser-x'), false);
      assert.equal(await signInLinks.askedFrom(storage.db, 'sil-none', 'browser-d'), false);
      // A link from before browsers were kept opens nowhere at once; the confirm button still spends it.
      assert.equal(await signInLinks.spendInBrowser(storage.db, 'sil-e', 'browser-d', 50), undefined);
      assert.equal(await signInLinks.spend(storage.db, 'sil-e', 50), 'e@example.org');
    });

    test('spentIntoSession: the link’s member’s session opened since it was spent, within its time', async () => {
      const ada = await storage.member('Ada');
      const email = (await members.byId(storage.db, ada))!.email;
      await signInLinks.insert(storage.db, link('sil-c', email, 1000));
      assert.equal(await signInLinks.spend(storage.db, 'sil-c', 200), email);
      const session = (hash: string, createdAt: number) =>
        sessions.insert(storage.db, {
          id_hash: hash,
          member_id: ada,
          created_at: createdAt,
          expires_at: 5000,
          revoked_at: null,
        });
      await session('ses-before', 199);
      await session('ses-at', 200);
      assert.equal(await signInLinks.spentIntoSession(storage.db, 'sil-c', 'ses-at', 300), true);
      assert.equal(await signInLinks.spentIntoSession(storage.db, 'sil-c', 'ses-before', 300), false);
      assert.equal(await signInLinks.spentIntoSession(storage.db, 'sil-c', 'ses-at', 1000), false);
      assert.equal(await signInLinks.spentIntoSession(storage.db, 'sil-none', 'ses-at', 300), false);
    });

    test('the outbox key: the first one offered is kept', async () => {
      assert.equal(await devOutbox.keepKey(storage.db, 'first'), 'first');
      assert.equal(await devOutbox.keepKey(storage.db, 'second'), 'first');
    });
  });
}
