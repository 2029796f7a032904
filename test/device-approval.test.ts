import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from './support/app.ts';
import { INVENTED_CSRF_PAIR, signInThroughOutbox } from './support/browser.ts';
import { engines } from './support/databases.ts';
import { scopesListed } from './support/scopes-listed.ts';

for (const engine of engines) {
  describe(`device approval page (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine: engine.name });
    });
    after(() => t?.close());

    async function startGrant() {
      const started = await t.call('POST', '/api/agent/signup/start', {
        body: {
          scopes: ['read:public', 'events:rsvp', 'resources:book'],
          client_name: 'Calendar <b>bot</b>',
        },
        headers: { 'user-agent': 'test-agent/1.0' },
      });
      assert.equal(started.status, 200, started.text);
      return started.body as { device_code: string; user_code: string };
    }
    const poll = (deviceCode: string) =>
      t.call('GET', `/api/agent/signup/poll?device_code=${encodeURIComponent(deviceCode)}`);
    const grantRow = (id: string) =>
      t.deps.db.selectFrom('device_grants').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

    test('a member reviews the request, sees the denied scopes, approves; the agent gets its token once', async () => {
      const grant = await startGrant();
      const member = await t.member('member', 'Mina');
      const browser = await signInThroughOutbox(t, member.email);

      // The agent's link, opened signed in: what it asks for at once, Approve the one step left.
      const linked = await browser.request('GET', `/signup-with-agent?code=${grant.user_code}`);
      assert.equal(linked.status, 200);
      assert.match(linked.text, /An agent asks to act for you/);
      assert.match(
        linked.text,
        new RegExp(`<code class="user-code">${grant.user_code}</code></strong>: check that your agent`),
      );
      assert.deepEqual(scopesListed(linked.text, 'granted'), ['read:public', 'events:rsvp']);
      assert.match(linked.text, /name="decision" value="approve"/);
      const pendingRow = (await t.deps.db.selectFrom('device_grants').selectAll().execute()).at(-1)!;
      assert.equal(pendingRow.bound_session_hash, null, 'a GET binds nothing');
      assert.equal(pendingRow.status, 'pending', 'and decides nothing');
      const form = await browser.request('GET', '/signup-with-agent');
      assert.match(form.text, /Enter the code the agent showed you/, 'without a code: the form');

      const entered = grant.user_code.toLowerCase().replace('-', ' ');
      const reviewPage = await browser.request('POST', '/signup-with-agent', {
        code: entered,
        csrf: browser.csrf,
      });
      assert.equal(reviewPage.status, 200, reviewPage.text);
      assert.match(reviewPage.text, /unverified/);
      assert.match(reviewPage.text, /Calendar &lt;b&gt;bot&lt;\/b&gt;/, 'the client name is escaped');
      assert.match(reviewPage.text, /test-agent\/1\.0/);
      assert.match(reviewPage.text, /127\.0\.0\.1/);
      assert.deepEqual(scopesListed(reviewPage.text, 'denied'), ['resources:book']);
      assert.deepEqual(scopesListed(reviewPage.text, 'granted'), ['read:public', 'events:rsvp']);
      assert.match(reviewPage.text, /Book rooms and printers\./, 'each scope in words');
      assert.match(reviewPage.text, /Medium risk: acts for you/, 'with its risk');
      const bound = await grantRow(pendingRow.id);
      assert.notEqual(bound.bound_session_hash, null);

      const intruder = await signInThroughOutbox(t, (await t.member('core')).email);
      const stolen = await intruder.request('POST', '/signup-with-agent/decide', {
        code: grant.user_code,
        decision: 'approve',
        csrf: intruder.csrf,
      });
      assert.equal(stolen.status, 403, 'another member cannot decide a code bound to someone else');
      assert.equal((await grantRow(pendingRow.id)).status, 'pending');

      const forged = await browser.request('POST', '/signup-with-agent/decide', {
        code: grant.user_code,
        decision: 'approve',
      });
      assert.equal(forged.status, 403);
      assert.equal((await grantRow(pendingRow.id)).status, 'pending');

      const approved = await browser.request('POST', '/signup-with-agent/decide', {
        code: grant.user_code,
        decision: 'approve',
        csrf: browser.csrf,
      });
      assert.equal(approved.status, 200);
      assert.match(approved.text, /Approved/);
      const decided = await grantRow(pendingRow.id);
      assert.equal(decided.status, 'approved');
      assert.equal(decided.member_id, member.id);
      assert.deepEqual(JSON.parse(decided.denied_scopes!), ['resources:book']);

      const completed = await poll(grant.device_code);
      assert.equal(completed.status, 200);
      assert.equal(completed.body.status, 'completed');
      assert.deepEqual(completed.body.denied_scopes, ['resources:book']);
      const check = await t.call('GET', '/api/agent/setup-check', { token: completed.body.agent_token });
      assert.equal(check.body.ready, true);
      t.clock.advance(10_000);
      assert.equal((await poll(grant.device_code)).status, 410);
    });

    test("the decision is refused with another member's CSRF pair or an invented one, accepted with its own", async () => {
      const grant = await startGrant();
      const member = await t.member('member', 'Mina');
      const browser = await signInThroughOutbox(t, member.email);
      const other = await signInThroughOutbox(t, (await t.member('member', 'Omar')).email);
      await other.request('GET', '/signup-with-agent');
      const review = await browser.request('POST', '/signup-with-agent', {
        code: grant.user_code,
        csrf: browser.csrf,
      });
      assert.equal(review.status, 200, review.text);
      const decide = { code: grant.user_code, decision: 'approve' };
      const pending = (await t.deps.db.selectFrom('device_grants').selectAll().execute()).at(-1)!;
      for (const [label, pair] of [
        ["another member's pair", other.csrfPair],
        ['an invented pair', INVENTED_CSRF_PAIR],
      ] as const) {
        const posing = browser.withCsrfPair(pair);
        const refused = await posing.request('POST', '/signup-with-agent/decide', {
          ...decide,
          csrf: posing.csrf,
        });
        assert.equal(refused.status, 403, label);
        assert.match(refused.text, /This form has expired/, label);
        assert.equal((await grantRow(pending.id)).status, 'pending', label);
      }
      const approved = await browser.request('POST', '/signup-with-agent/decide', {
        ...decide,
        csrf: browser.csrf,
      });
      assert.equal(approved.status, 200, approved.text);
      assert.equal((await grantRow(pending.id)).status, 'approved');
    });

    test('a denial reaches the agent as cancelled once, then 410', async () => {
      const grant = await startGrant();
      const member = await t.member('member');
      const browser = await signInThroughOutbox(t, member.email);
      await browser.request('POST', '/signup-with-agent', { code: grant.user_code, csrf: browser.csrf });
      const denied = await browser.request('POST', '/signup-with-agent/decide', {
        code: grant.user_code,
        decision: 'deny',
        csrf: browser.csrf,
      });
      assert.equal(denied.status, 200);
      assert.match(denied.text, /Denied/);
      const cancelled = await poll(grant.device_code);
      assert.equal(cancelled.body.status, 'cancelled');
      t.clock.advance(10_000);
      assert.equal((await poll(grant.device_code)).status, 410);
    });

    test('without a session the page asks to sign in, and code entry is rate-limited', async () => {
      const anonymous = await fetch(`${t.baseUrl}/signup-with-agent?code=ABCD-EFGH`);
      assert.match(await anonymous.text(), /Sign in first/);

      const browser = await signInThroughOutbox(t, (await t.member('member')).email);
      // A fresh minute: the earlier tests entered codes from this same IP.
      t.clock.advance(60_000);
      const statuses: number[] = [];
      for (let i = 0; i < 11; i++) {
        statuses.push(
          (await browser.request('POST', '/signup-with-agent', { code: 'BBBB-BBBB', csrf: browser.csrf }))
            .status,
        );
      }
      assert.deepEqual(statuses, [...Array(10).fill(404), 429]);
      // The agent's link counts as an entry too: it is no way around the limit.
      const linked = await browser.request('GET', '/signup-with-agent?code=BBBB-BBBB');
      assert.equal(linked.status, 429);
    });

    test("the agent's link opened by another session than the one that entered the code is refused", async () => {
      t.clock.advance(60_000); // a fresh minute of code entries from this IP
      const grant = await startGrant();
      const first = await signInThroughOutbox(t, (await t.member('member')).email);
      const entered = await first.request('POST', '/signup-with-agent', {
        code: grant.user_code,
        csrf: first.csrf,
      });
      assert.equal(entered.status, 200);
      const second = await signInThroughOutbox(t, (await t.member('member')).email);
      const linked = await second.request('GET', `/signup-with-agent?code=${grant.user_code}`);
      assert.equal(linked.status, 403);
      assert.match(linked.text, /entered in another session/);
      const again = await first.request('GET', `/signup-with-agent?code=${grant.user_code}`);
      assert.equal(again.status, 200, 'the session it is bound to still reviews it');
      const unknown = await first.request('GET', '/signup-with-agent?code=ZZZZ-ZZZZ');
      assert.equal(unknown.status, 404);
    });
  });
}
