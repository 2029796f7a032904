import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { refreshLeaderboard } from '../src/domain/leaderboard/refresh.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { type Browser, signInThroughOutbox } from './support/browser.ts';
import { engines } from './support/databases.ts';
import { FakeCodeHost } from './support/fake-code-host.ts';

const PAGE = '/leaderboard/link';
let sequence = 0;

for (const engine of engines) {
  describe(`code-host link page (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    let host: FakeCodeHost;

    before(async () => {
      host = await new FakeCodeHost().start();
      t = await startTestApp({
        engine: engine.name,
        config: {
          codeHost: {
            webUrl: host.url,
            apiUrl: host.apiUrl,
            clientId: host.clientId,
            clientSecret: host.clientSecret,
            timeoutMs: 500,
          },
        },
      });
    });
    after(async () => {
      await t?.close();
      await host?.close();
    });
    beforeEach(() => {
      host.requests.length = 0;
      host.searchFailures.clear();
    });

    /** A signed-in core member, and a host account (with its token) nobody has linked yet. */
    async function person(name: string) {
      sequence += 1;
      const member = await t.member('core', name);
      const browser = await signInThroughOutbox(t, member.email);
      const account = { id: 7000 + sequence, login: `${name.toLowerCase()}-${sequence}` };
      const hostToken = `gho_${name.toLowerCase()}_${sequence}_secret`;
      host.tokens.set(hostToken, account);
      return { member, browser, account, hostToken };
    }
    const linkRow = (memberId: string) =>
      t.deps.db.selectFrom('vcs_links').selectAll().where('member_id', '=', memberId).executeTakeFirst();

    /** The member's browser goes to the host and back: the redirects are followed by hand. */
    async function throughOAuth(browser: Browser) {
      const start = await browser.request('POST', `${PAGE}/oauth`, { csrf: browser.csrf });
      assert.equal(start.status, 303, start.text);
      const authorize = new URL(start.headers.get('location')!);
      const approved = await fetch(authorize, { redirect: 'manual' });
      assert.equal(approved.status, 302);
      const callback = new URL(approved.headers.get('location')!);
      return { start, authorize, callback };
    }

    test('OAuth end to end: authorize with state, callback exchanges the code, reads /user, keeps no token', async () => {
      const { member, browser, account, hostToken } = await person('Ada');
      const page = await browser.request('GET', PAGE);
      assert.equal(page.status, 200);
      assert.match(page.text, /No account linked/);
      assert.match(page.text, /action="\/leaderboard\/link\/oauth"/);

      host.authorizeAs = hostToken;
      const { start, authorize, callback } = await throughOAuth(browser);
      assert.equal(`${authorize.origin}${authorize.pathname}`, `${host.url}/login/oauth/authorize`);
      assert.equal(authorize.searchParams.get('client_id'), host.clientId);
      assert.equal(authorize.searchParams.get('redirect_uri'), `${t.baseUrl}${PAGE}/callback`);
      const state = authorize.searchParams.get('state')!;
      assert.match(state, /^st_[0-9a-f]{48}$/);
      const stateCookie = start.headers.getSetCookie().find((c) => c.startsWith('__vcs_state='))!;
      const [pair, ...attributes] = stateCookie.split('; ');
      assert.equal(pair, `__vcs_state=${state}`);
      assert.deepEqual(attributes.sort(), ['HttpOnly', 'Max-Age=600', `Path=${PAGE}`, 'SameSite=Lax']);
      assert.equal(`${callback.origin}${callback.pathname}`, `${t.baseUrl}${PAGE}/callback`);

      const done = await browser.request('GET', callback.pathname + callback.search);
      assert.equal(done.status, 303, done.text);
      assert.equal(done.headers.get('location'), PAGE);
      assert.equal(browser.cookies.has('__vcs_state'), false, 'the state is spent');

      const [exchange] = host.seen('/login/oauth/access_token');
      assert.equal(exchange.headers.accept, 'application/json');
      assert.deepEqual(JSON.parse(exchange.body), {
        client_id: host.clientId,
        client_secret: host.clientSecret,
        code: callback.searchParams.get('code'),
        redirect_uri: `${t.baseUrl}${PAGE}/callback`,
      });
      const [user] = host.seen('/api/v3/user');
      assert.equal(user.headers.authorization, `Bearer ${hostToken}`);

      const row = await linkRow(member.id);
      assert.deepEqual(
        {
          ...row,
          verified_at: Number(row!.verified_at),
          updated_at: Number(row!.updated_at),
          opted_in: Number(row!.opted_in),
          private_counting: Number(row!.private_counting),
        },
        {
          member_id: member.id,
          host_user_id: String(account.id),
          username: account.login,
          source: 'oauth',
          verified_at: t.clock.now(),
          opted_in: 0,
          private_counting: 0,
          updated_at: t.clock.now(),
        },
      );
      const everything = JSON.stringify(await t.deps.db.selectFrom('vcs_links').selectAll().execute());
      assert.ok(!everything.includes(hostToken), 'the host token is not stored');

      const linked = await browser.request('GET', PAGE);
      assert.match(linked.text, new RegExp(`<strong id="vcs-username">${account.login}</strong>`));
      assert.match(linked.text, /signed in on the host/);

      // Replaying the callback (the state cookie is gone) links nothing new.
      const replay = await browser.request('GET', callback.pathname + callback.search);
      assert.equal(replay.status, 400);
    });

    test('a forged or mismatched state, a refused code and a cancelled grant link nothing', async () => {
      const { member, browser, hostToken } = await person('Mallory');
      host.authorizeAs = hostToken;
      const { callback } = await throughOAuth(browser);
      const forged = new URL(callback);
      forged.searchParams.set('state', 'st_forged');
      const refused = await browser.request('GET', forged.pathname + forged.search);
      assert.equal(refused.status, 400);
      assert.match(refused.text, /not started here/);
      assert.equal(host.seen('/login/oauth/access_token').length, 0, 'no exchange without a matching state');

      // The host turns the code down (GitHub answers 200 with an error field).
      host.authorizeAs = undefined;
      const second = await throughOAuth(browser);
      const badCode = await browser.request('GET', second.callback.pathname + second.callback.search);
      assert.equal(badCode.status, 400, badCode.text);
      assert.match(badCode.text, /did not accept/);

      // The person pressed Cancel on the host: error=access_denied and no code.
      const third = await throughOAuth(browser);
      const cancelled = await browser.request(
        'GET',
        `${PAGE}/callback?error=access_denied&state=${third.callback.searchParams.get('state')}`,
      );
      assert.equal(cancelled.status, 400);
      assert.equal(await linkRow(member.id), undefined);

      // Without the form's CSRF token nothing starts.
      const noCsrf = await browser.request('POST', `${PAGE}/oauth`, {});
      assert.equal(noCsrf.status, 403);
    });

    test('a personal access token links the account; a bad token or a failing host links nothing', async () => {
      const { member, browser, account, hostToken } = await person('Pat');
      const forged = await browser.request('POST', `${PAGE}/token`, { token: hostToken });
      assert.equal(forged.status, 403, 'CSRF refused');

      const wrong = await browser.request('POST', `${PAGE}/token`, {
        token: 'ghp_not_a_token',
        csrf: browser.csrf,
      });
      assert.equal(wrong.status, 400);
      assert.match(wrong.text, /did not accept/);
      const blank = await browser.request('POST', `${PAGE}/token`, { token: '  ', csrf: browser.csrf });
      assert.equal(blank.status, 400);
      assert.equal(await linkRow(member.id), undefined);

      const ok = await browser.request('POST', `${PAGE}/token`, { token: hostToken, csrf: browser.csrf });
      assert.equal(ok.status, 303, ok.text);
      const [user] = host.seen('/api/v3/user').slice(-1);
      assert.equal(user.headers.authorization, `Bearer ${hostToken}`);
      const row = await linkRow(member.id);
      assert.equal(row?.username, account.login);
      assert.equal(row?.source, 'token');
      assert.ok(!JSON.stringify(row).includes(hostToken), 'the personal token is not stored');

      // Someone else proving the same account is refused: one account counts for one member.
      const other = await person('Copycat');
      const taken = await browser.request('POST', `${PAGE}/token`, { token: hostToken, csrf: browser.csrf });
      assert.equal(taken.status, 303, 'relinking your own account is fine');
      const stolen = await other.browser.request('POST', `${PAGE}/token`, {
        token: hostToken,
        csrf: other.browser.csrf,
      });
      assert.equal(stolen.status, 409);
      assert.match(stolen.text, /already linked to another member/);
      assert.equal(await linkRow(other.member.id), undefined);
    });

    test('a host failing, rate-limiting or silent gets a 502 page and links nothing', async () => {
      const { member, browser, hostToken } = await person('Down');
      const failures = [
        { status: 503 },
        {
          status: 403,
          headers: { 'x-ratelimit-remaining': '0' },
          body: { message: 'API rate limit exceeded' },
        },
        'hang' as const,
      ];
      try {
        for (const failure of failures) {
          host.userFailure = failure;
          const down = await browser.request('POST', `${PAGE}/token`, {
            token: hostToken,
            csrf: browser.csrf,
          });
          assert.equal(down.status, 502, JSON.stringify(failure));
          assert.match(down.text, /could not be reached/);
        }
      } finally {
        host.userFailure = undefined;
      }
      assert.equal(await linkRow(member.id), undefined);
    });

    test('opt in and out on the page, then unlink: the member leaves the board at once', async () => {
      const { member, browser, account, hostToken } = await person('Olive');
      const notLinked = await browser.request('POST', `${PAGE}/optin`, { optIn: 'true', csrf: browser.csrf });
      assert.equal(notLinked.status, 409);
      await browser.request('POST', `${PAGE}/token`, { token: hostToken, csrf: browser.csrf });
      const joined = await browser.request('POST', `${PAGE}/optin`, { optIn: 'true', csrf: browser.csrf });
      assert.equal(joined.status, 303);
      assert.equal(Number((await linkRow(member.id))!.opted_in), 1);

      host.commits.set(account.login, 4);
      await refreshLeaderboard(t.deps);
      const page = await browser.request('GET', PAGE);
      assert.match(page.text, /opted in<\/strong>; this week rank 1 of \d+ with 4 commits/);
      const board = await t.call('GET', '/api/leaderboard');
      assert.ok(board.body.members.some((m: { handle: string }) => m.handle === member.handle));

      const unlinked = await browser.request('POST', `${PAGE}/unlink`, { csrf: browser.csrf });
      assert.equal(unlinked.status, 303);
      assert.equal(await linkRow(member.id), undefined);
      const counts = await t.deps.db
        .selectFrom('leaderboard_counts')
        .select('member_id')
        .where('member_id', '=', member.id)
        .execute();
      assert.deepEqual(counts, []);
      const after = await t.call('GET', '/api/leaderboard');
      assert.ok(!after.body.members.some((m: { handle: string }) => m.handle === member.handle));
    });

    test('signed out, the page and its forms send the visitor to sign in', async () => {
      for (const [method, path] of [
        ['GET', PAGE],
        ['GET', `${PAGE}/callback?code=x&state=y`],
      ]) {
        const response = await fetch(t.baseUrl + path, { method, redirect: 'manual' });
        assert.equal(response.status, 303, path);
        assert.equal(response.headers.get('location'), '/signin');
      }
    });
  });
}
