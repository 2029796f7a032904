import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { jwkThumbprint } from '../src/domain/auth/signing-keys.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { signInThroughOutbox } from './support/browser.ts';
import { engines } from './support/databases.ts';
import { newClientKey, signRequest } from './support/signer.ts';

for (const engine of engines) {
  describe(`agent console: signing keys (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine: engine.name });
    });
    after(() => t?.close());

    const rowOf = (id: string) =>
      t.deps.db
        .selectFrom('tokens')
        .select(['signing_key_id', 'signing_key_x', 'signing_enforced'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();

    test('a member binds a key, requires signatures, and revokes the key from the console', async () => {
      const member = await t.member('member', 'Kei');
      const token = await t.token(member, ['membership:read']);
      const [{ id }] = await t.deps.db
        .selectFrom('tokens')
        .select('id')
        .where('member_id', '=', member.id)
        .execute();
      const browser = await signInThroughOutbox(t, member.email);
      const page = await browser.request('GET', '/agent-console');
      assert.match(page.text, /Bind key/);
      const key = newClientKey();

      const forged = await browser.request('POST', '/agent-console/keys/register', {
        token_id: id,
        jwk: key.jwk.x,
      });
      assert.equal(forged.status, 403);
      assert.equal((await rowOf(id)).signing_key_id, null);

      const bound = await browser.request('POST', '/agent-console/keys/register', {
        token_id: id,
        jwk: JSON.stringify(key.jwk),
        csrf: browser.csrf,
      });
      assert.equal(bound.status, 303, bound.text);
      assert.equal((await rowOf(id)).signing_key_x, key.jwk.x);
      const listed = await browser.request('GET', '/agent-console');
      assert.ok(listed.text.includes(jwkThumbprint(key.jwk.x)), 'the thumbprint is shown');
      assert.ok(listed.text.includes(key.keyId));

      const twice = await browser.request('POST', '/agent-console/keys/register', {
        token_id: id,
        jwk: newClientKey().jwk.x,
        csrf: browser.csrf,
      });
      assert.equal(twice.status, 409);
      assert.match(twice.text, /revoke it first/);

      const enforced = await browser.request('POST', '/agent-console/keys/enforce', {
        token_id: id,
        enforce: '1',
        csrf: browser.csrf,
      });
      assert.equal(enforced.status, 303);
      assert.equal(Number((await rowOf(id)).signing_enforced), 1);
      assert.match((await browser.request('GET', '/agent-console')).text, /Stop requiring signatures/);
      assert.equal(
        (await t.call('GET', '/api/activity/me', { token })).status,
        401,
        'the bare bearer is refused',
      );
      const headers = await signRequest(
        { method: 'GET', url: `${t.baseUrl}/api/activity/me`, headers: { authorization: `Bearer ${token}` } },
        { key, created: new Date(t.clock.now()) },
      );
      assert.equal(
        (await fetch(`${t.baseUrl}/api/activity/me`, { headers })).status,
        200,
        'a signed call passes',
      );

      const revoked = await browser.request('POST', '/agent-console/keys/revoke', {
        token_id: id,
        csrf: browser.csrf,
      });
      assert.equal(revoked.status, 303);
      assert.equal((await rowOf(id)).signing_key_id, null);
      assert.match(
        (await browser.request('GET', '/agent-console')).text,
        /no key bound: this token answers nothing/,
      );

      const types = (
        await t.deps.db.selectFrom('event_log').select('type').where('recipient_id', '=', member.id).execute()
      ).map((row) => row.type);
      for (const type of ['signing_key_registered', 'signing_enforcement_changed', 'signing_key_revoked'])
        assert.ok(types.includes(type), type);
    });

    test('another member’s token cannot be touched from the console', async () => {
      const owner = await t.member('member');
      await t.token(owner, ['membership:read']);
      const [{ id }] = await t.deps.db
        .selectFrom('tokens')
        .select('id')
        .where('member_id', '=', owner.id)
        .execute();
      const intruder = await t.member('member');
      const browser = await signInThroughOutbox(t, intruder.email);
      await browser.request('GET', '/agent-console');
      const answer = await browser.request('POST', '/agent-console/keys/register', {
        token_id: id,
        jwk: newClientKey().jwk.x,
        csrf: browser.csrf,
      });
      assert.equal(answer.status, 404);
      assert.equal((await rowOf(id)).signing_key_id, null);
    });
  });
}
