import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sha256 } from '../src/secrets.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { signInThroughOutbox } from './support/browser.ts';
import { engines } from './support/databases.ts';

for (const engine of engines) {
  describe(`agent console (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine: engine.name });
    });
    after(() => t?.close());

    const tokensOf = (memberId: string) =>
      t.deps.db.selectFrom('tokens').selectAll().where('member_id', '=', memberId).execute();

    test('signed out, the console sends you to sign in', async () => {
      const response = await fetch(`${t.baseUrl}/agent-console`, { redirect: 'manual' });
      assert.equal(response.status, 303);
      assert.equal(response.headers.get('location'), '/signin');
    });

    test('a member mints a token (shown once), sees it listed, and revokes it', async () => {
      const member = await t.member('member', 'Mina');
      const browser = await signInThroughOutbox(t, member.email);
      const consolePage = await browser.request('GET', '/agent-console');
      assert.equal(consolePage.status, 200);
      assert.match(consolePage.text, /value="events:rsvp"/);
      assert.doesNotMatch(
        consolePage.text,
        /value="resources:book"/,
        'only scopes the tier grants are offered',
      );

      const minted = await browser.request('POST', '/agent-console/mint', {
        name: 'my laptop agent',
        scope: ['read:public', 'events:rsvp'],
        sandbox: '1',
        csrf: browser.csrf,
      });
      assert.equal(minted.status, 201, minted.text);
      const plaintext = minted.text.match(/<pre id="new-token">(agt_[A-Za-z0-9_-]{43})<\/pre>/)?.[1];
      assert.ok(plaintext, 'the token is shown');
      assert.match(minted.text, /AGENT_COMMONS_TOKEN/);
      const [row] = await tokensOf(member.id);
      assert.equal(row.hash, sha256(plaintext));
      assert.deepEqual(JSON.parse(row.scopes), ['read:public', 'events:rsvp']);
      assert.equal(row.sandbox, 1);
      assert.equal(row.source, 'console');
      assert.equal(row.name, 'my laptop agent');
      const minting = await t.deps.db
        .selectFrom('event_log')
        .select('type')
        .where('recipient_id', '=', member.id)
        .execute();
      assert.ok(minting.some((event) => event.type === 'token_minted'));

      const ready = await t.call('GET', '/api/agent/setup-check', { token: plaintext });
      assert.equal(ready.body.ready, true);

      const listed = await browser.request('GET', '/agent-console');
      assert.match(listed.text, new RegExp(`<code>${row.prefix}…</code>`));
      assert.ok(!listed.text.includes(plaintext), 'the list never shows the secret again');
      assert.match(listed.text, /by the <span class="source">console<\/span> flow/);

      const forged = await browser.request('POST', '/agent-console/revoke', { token_id: row.id });
      assert.equal(forged.status, 403);
      assert.equal((await tokensOf(member.id))[0].revoked_at, null);

      const revoked = await browser.request('POST', '/agent-console/revoke', {
        token_id: row.id,
        csrf: browser.csrf,
      });
      assert.equal(revoked.status, 303);
      assert.notEqual((await tokensOf(member.id))[0].revoked_at, null);
      const after = await t.call('GET', '/api/agent/setup-check', { token: plaintext });
      assert.equal(after.body.ready, false, 'the revoked token no longer works');
    });

    test('a starter set mints in one click: the form on the page carries the set, limited to the tier', async () => {
      const member = await t.member('member', 'Preset Pia');
      const browser = await signInThroughOutbox(t, member.email);
      const page = await browser.request('GET', '/agent-console');
      const form = page.text
        .match(/<form method="post" action="\/agent-console\/mint" class="preset">(.*?)<\/form>/gs)
        ?.find((text) => text.includes('data-preset="events_and_rsvp"'));
      assert.ok(form, 'the events-and-RSVP set is a button');
      const fields = [...form.matchAll(/<input type="hidden" name="(\w+)" value="([^"]*)">/g)];
      const scopes = fields.filter(([, name]) => name === 'scope').map(([, , value]) => value);
      assert.deepEqual(scopes, ['read:public', 'membership:read', 'events:read_upcoming', 'events:rsvp']);
      assert.ok(
        !page.text.includes('data-preset="submit_a_highlight"') || !form.includes('events:submit_recap'),
        'a scope above the tier is never in a preset',
      );
      // What the button sends, as the browser sends it.
      const minted = await browser.request('POST', '/agent-console/mint', {
        name: fields.find(([, name]) => name === 'name')![2],
        scope: scopes,
        csrf: browser.csrf,
      });
      assert.equal(minted.status, 201, minted.text);
      const [row] = await tokensOf(member.id);
      assert.equal(row.name, 'Events and RSVP');
      assert.deepEqual(JSON.parse(row.scopes), scopes);
      assert.equal(row.sandbox, 0);
    });

    test('scopes above the tier, a missing name and forged forms are refused; others’ tokens cannot be revoked', async () => {
      const member = await t.member('member');
      const browser = await signInThroughOutbox(t, member.email);
      const above = await browser.request('POST', '/agent-console/mint', {
        name: 'greedy',
        scope: ['read:public', 'resources:book'],
        csrf: browser.csrf,
      });
      assert.equal(above.status, 400);
      assert.match(above.text, /does not grant: resources:book/);
      const unnamed = await browser.request('POST', '/agent-console/mint', {
        name: ' ',
        scope: 'read:public',
        csrf: browser.csrf,
      });
      assert.equal(unnamed.status, 400);
      const forged = await browser.request('POST', '/agent-console/mint', {
        name: 'x',
        scope: 'read:public',
      });
      assert.equal(forged.status, 403);
      assert.equal((await tokensOf(member.id)).length, 0);

      const other = await t.member('core');
      await t.token(other, ['read:public']);
      const [theirs] = await tokensOf(other.id);
      const attempt = await browser.request('POST', '/agent-console/revoke', {
        token_id: theirs.id,
        csrf: browser.csrf,
      });
      assert.equal(attempt.status, 404);
      assert.equal((await tokensOf(other.id))[0].revoked_at, null);
    });
  });
}
