import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sha256 } from '../src/secrets.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { type Browser, INVENTED_CSRF_PAIR, signInThroughOutbox } from './support/browser.ts';
import { engines } from './support/databases.ts';
import {
  authorize,
  consentSecret,
  locationParams,
  pkce,
  registerClient,
  tokenRequest,
} from './support/oauth-client.ts';
import { scopesListed } from './support/scopes-listed.ts';

const REDIRECT = 'http://127.0.0.1:8976/callback';

for (const engine of engines) {
  describe(`OAuth authorization code with PKCE (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine: engine.name });
    });
    after(() => t?.close());

    const row = (secret: string) =>
      t.deps.db
        .selectFrom('oauth_authorizations')
        .selectAll()
        .where('request_hash', '=', sha256(secret))
        .executeTakeFirstOrThrow();

    async function client(name = 'Desk assistant', redirectUris = [REDIRECT]) {
      const registered = await registerClient(t.baseUrl, { client_name: name, redirect_uris: redirectUris });
      assert.equal(registered.status, 201, JSON.stringify(registered.body));
      return registered.body.client_id as string;
    }

    /** Registration, authorization request and consent page: the member is signed in and sees the review. */
    async function untilConsent(
      browser: Browser,
      options: { scope?: string; clientId?: string; redirect?: string; state?: string } = {},
    ) {
      const clientId = options.clientId ?? (await client());
      const { verifier, challenge } = pkce();
      const redirect = options.redirect ?? REDIRECT;
      const started = await authorize(browser, {
        response_type: 'code',
        client_id: clientId,
        redirect_uri: redirect,
        scope: options.scope ?? 'read:public membership:read events:rsvp',
        state: options.state ?? 'state-xyz',
        code_challenge: challenge,
        code_challenge_method: 'S256',
        resource: `${t.baseUrl}/api/mcp`,
      });
      assert.equal(started.status, 303, started.text);
      const secret = consentSecret(started.headers.get('location'));
      const review = await browser.request('GET', `/oauth/consent?request=${secret}`);
      assert.equal(review.status, 200, review.text);
      return { clientId, verifier, secret, review, redirect };
    }

    async function approve(browser: Browser, secret: string, extra: Record<string, string> = {}) {
      const decided = await browser.request('POST', '/oauth/consent', {
        request: secret,
        decision: 'approve',
        csrf: browser.csrf,
        ...extra,
      });
      assert.equal(decided.status, 303, decided.text);
      return locationParams(decided.headers.get('location'));
    }

    test('the whole flow: register, consent, code, token; the token is an ordinary agt_ token on every surface', async () => {
      const member = await t.member('member', 'Mina');
      const browser = await signInThroughOutbox(t, member.email);
      const flow = await untilConsent(browser, {
        scope: 'read:public membership:read events:rsvp resources:book',
      });
      assert.match(flow.review.text, /Desk assistant/);
      assert.match(flow.review.text, /unverified/);
      assert.match(flow.review.text, /<strong id="redirect-host">127\.0\.0\.1:8976<\/strong>/);
      assert.deepEqual(
        scopesListed(flow.review.text, 'denied'),
        ['resources:book'],
        'above the tier: shown as not granted',
      );
      assert.match(flow.review.text, /Book rooms and printers\./, 'in words');
      assert.match(
        flow.review.headers.get('content-security-policy') ?? '',
        /form-action 'self'[^;]* http:\/\/127\.0\.0\.1:8976;/,
      );
      const back = await approve(browser, flow.secret);
      assert.equal(back.get('state'), 'state-xyz', 'state round-trips');
      assert.equal(back.get('iss'), t.baseUrl);
      const code = back.get('code')!;
      const stored = await row(flow.secret);
      assert.equal(stored.status, 'approved');
      assert.equal(stored.code_hash, sha256(code), 'only the hash of the code is stored');
      assert.deepEqual(JSON.parse(stored.granted_scopes!), ['read:public', 'membership:read', 'events:rsvp']);

      const token = await tokenRequest(t.baseUrl, {
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT,
        client_id: flow.clientId,
        code_verifier: flow.verifier,
      });
      assert.equal(token.status, 200, JSON.stringify(token.body));
      assert.equal(token.body.token_type, 'Bearer');
      assert.equal(
        token.body.scope,
        'read:public membership:read events:rsvp',
        'scopes above the tier are not granted',
      );
      assert.match(token.body.access_token, /^agt_[A-Za-z0-9_-]{43}$/);
      const minted = await t.deps.db
        .selectFrom('tokens')
        .selectAll()
        .where('hash', '=', sha256(token.body.access_token))
        .executeTakeFirstOrThrow();
      assert.equal(minted.source, 'oauth');
      assert.equal(minted.name, 'Desk assistant');
      assert.equal(minted.member_id, member.id);
      assert.deepEqual(JSON.parse(minted.scopes), ['read:public', 'membership:read', 'events:rsvp']);
      assert.equal((await row(flow.secret)).token_id, minted.id);
      const logged = await t.deps.db
        .selectFrom('event_log')
        .selectAll()
        .where('recipient_id', '=', member.id)
        .where('type', '=', 'token_minted')
        .execute();
      assert.equal(logged.length, 1);
      assert.equal(JSON.parse(logged[0].actor).kind, 'oauth');
      const console = await browser.request('GET', '/agent-console');
      assert.match(console.text, /Desk assistant/, 'listed in the agent console with the client name');

      const rest = await t.call('GET', '/api/activity/me', { token: token.body.access_token });
      assert.equal(rest.status, 200, rest.text);
      const a2a = await t.call('POST', '/api/a2a', {
        token: token.body.access_token,
        body: {
          jsonrpc: '2.0',
          id: 1,
          method: 'tasks/send',
          params: { capability: 'ic_get_my_membership', arguments: {} },
        },
      });
      assert.equal(a2a.body.error, undefined, a2a.text);
    });

    test('a loopback redirect may use any port; any other difference is refused before anything is stored', async () => {
      const member = await t.member('member');
      const browser = await signInThroughOutbox(t, member.email);
      const clientId = await client();
      const otherPort = await untilConsent(browser, {
        clientId,
        redirect: 'http://127.0.0.1:41234/callback',
      });
      const back = await approve(browser, otherPort.secret);
      assert.ok(back.get('code'));
      const before = await t.deps.db.selectFrom('oauth_authorizations').select('id').execute();
      for (const redirect of [
        'http://127.0.0.1:8976/other',
        'https://evil.example/callback',
        'http://localhost:8976/callback',
      ]) {
        const refused = await authorize(browser, {
          response_type: 'code',
          client_id: clientId,
          redirect_uri: redirect,
          code_challenge: pkce().challenge,
          code_challenge_method: 'S256',
        });
        assert.equal(refused.status, 400, redirect);
        assert.equal(refused.headers.get('location'), null, 'never redirected to an unregistered URI');
        assert.match(refused.text, /redirect address is not one the application registered/);
      }
      const unregistered = await authorize(browser, {
        response_type: 'code',
        client_id: 'mcpc_unknown',
        redirect_uri: REDIRECT,
        code_challenge: pkce().challenge,
        code_challenge_method: 'S256',
      });
      assert.equal(unregistered.status, 400);
      assert.match(unregistered.text, /unknown client_id/);
      const afterwards = await t.deps.db.selectFrom('oauth_authorizations').select('id').execute();
      assert.equal(afterwards.length, before.length);
    });

    test('refused at the authorization endpoint with a redirect: no PKCE, a resource not ours, unknown scopes', async () => {
      const member = await t.member('member');
      const browser = await signInThroughOutbox(t, member.email);
      const clientId = await client();
      const common = { response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, state: 's1' };
      const cases: [Record<string, string>, string][] = [
        [{}, 'invalid_request'],
        [{ code_challenge: pkce().challenge, code_challenge_method: 'plain' }, 'invalid_request'],
        [
          {
            code_challenge: pkce().challenge,
            code_challenge_method: 'S256',
            resource: 'https://other.example/api/mcp',
          },
          'invalid_target',
        ],
        [
          {
            code_challenge: pkce().challenge,
            code_challenge_method: 'S256',
            scope: 'read:public root:everything',
          },
          'invalid_scope',
        ],
      ];
      const before = await t.deps.db.selectFrom('oauth_authorizations').select('id').execute();
      for (const [extra, error] of cases) {
        const answer = await authorize(browser, { ...common, ...extra });
        assert.equal(answer.status, 303);
        const params = locationParams(answer.headers.get('location'));
        assert.ok(answer.headers.get('location')!.startsWith(REDIRECT));
        assert.equal(params.get('error'), error, JSON.stringify(extra));
        assert.equal(params.get('state'), 's1');
      }
      const afterwards = await t.deps.db.selectFrom('oauth_authorizations').select('id').execute();
      assert.equal(afterwards.length, before.length, 'nothing stored for a refused request');
    });

    test('consent: denied returns access_denied; a form without CSRF or from another session changes nothing', async () => {
      const member = await t.member('member');
      const browser = await signInThroughOutbox(t, member.email);
      const flow = await untilConsent(browser);
      const forged = await browser.request('POST', '/oauth/consent', {
        request: flow.secret,
        decision: 'approve',
      });
      assert.equal(forged.status, 403);
      assert.equal((await row(flow.secret)).status, 'pending');
      const crossSite = await fetch(`${t.baseUrl}/oauth/consent`, {
        method: 'POST',
        redirect: 'manual',
        headers: {
          cookie: browser.cookieHeader,
          origin: 'https://evil.example',
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({
          request: flow.secret,
          decision: 'approve',
          csrf: browser.csrf,
        }).toString(),
      });
      assert.equal(crossSite.status, 403);
      const intruder = await signInThroughOutbox(t, (await t.member('core')).email);
      const stolen = await intruder.request('POST', '/oauth/consent', {
        request: flow.secret,
        decision: 'approve',
        csrf: intruder.csrf,
      });
      assert.equal(stolen.status, 403);
      assert.match(stolen.text, /another session/);
      assert.equal((await row(flow.secret)).status, 'pending');
      assert.equal((await row(flow.secret)).member_id, null);

      const denied = await browser.request('POST', '/oauth/consent', {
        request: flow.secret,
        decision: 'deny',
        csrf: browser.csrf,
      });
      assert.equal(denied.status, 303);
      const params = locationParams(denied.headers.get('location'));
      assert.equal(params.get('error'), 'access_denied');
      assert.equal(params.get('state'), 'state-xyz');
      assert.equal(params.get('code'), null);
      const stored = await row(flow.secret);
      assert.equal(stored.status, 'denied');
      assert.equal(stored.code_hash, null);
      const again = await browser.request('POST', '/oauth/consent', {
        request: flow.secret,
        decision: 'approve',
        csrf: browser.csrf,
      });
      assert.equal(again.status, 409, 'decided once');
    });

    test("consent is refused with another member's CSRF pair or an invented one, accepted with its own", async () => {
      const browser = await signInThroughOutbox(t, (await t.member('member')).email);
      const other = await signInThroughOutbox(t, (await t.member('member')).email);
      await untilConsent(other);
      const flow = await untilConsent(browser);
      for (const [label, pair] of [
        ["another member's pair", other.csrfPair],
        ['an invented pair', INVENTED_CSRF_PAIR],
      ] as const) {
        const posing = browser.withCsrfPair(pair);
        const refused = await posing.request('POST', '/oauth/consent', {
          request: flow.secret,
          decision: 'approve',
          csrf: posing.csrf,
        });
        assert.equal(refused.status, 403, label);
        assert.match(refused.text, /This form has expired/, label);
        assert.equal((await row(flow.secret)).status, 'pending', label);
      }
      assert.match((await approve(browser, flow.secret)).get('code') ?? '', /./);
    });

    test('token endpoint refusals: verifier missing or wrong, another client, wrong redirect, expired, replayed (which revokes)', async () => {
      const member = await t.member('member');
      const browser = await signInThroughOutbox(t, member.email);
      const flow = await untilConsent(browser);
      const code = (await approve(browser, flow.secret)).get('code')!;
      const exchange = (extra: Record<string, string>) =>
        tokenRequest(t.baseUrl, {
          grant_type: 'authorization_code',
          code,
          redirect_uri: REDIRECT,
          client_id: flow.clientId,
          code_verifier: flow.verifier,
          ...extra,
        });
      const other = await client('Other app');
      for (const [extra, error, description] of [
        [{ code_verifier: '' }, 'invalid_request', /PKCE/],
        [{ code_verifier: pkce().verifier }, 'invalid_grant', /code_verifier/],
        [{ client_id: other }, 'invalid_grant', /another client/],
        [{ client_id: 'mcpc_nobody' }, 'invalid_client', /client_id/],
        [{ redirect_uri: 'http://127.0.0.1:8976/elsewhere' }, 'invalid_grant', /redirect_uri/],
      ] as const) {
        const refused = await exchange(extra);
        assert.equal(refused.status, error === 'invalid_client' ? 401 : 400, JSON.stringify(extra));
        assert.equal(refused.body.error, error);
        assert.match(refused.body.error_description, description);
        assert.equal(refused.body.access_token, undefined);
      }
      assert.equal((await row(flow.secret)).status, 'approved', 'refusals do not spend the code');
      const issued = await exchange({});
      assert.equal(issued.status, 200);
      const tokenId = (await row(flow.secret)).token_id!;
      const replayed = await exchange({});
      assert.equal(replayed.status, 400);
      assert.equal(replayed.body.error, 'invalid_grant');
      assert.match(replayed.body.error_description, /already used/);
      const revoked = await t.deps.db
        .selectFrom('tokens')
        .select('revoked_at')
        .where('id', '=', tokenId)
        .executeTakeFirstOrThrow();
      assert.notEqual(revoked.revoked_at, null, 'a replayed code revokes what it issued');
      assert.equal(
        (await t.call('GET', '/api/activity/me', { token: issued.body.access_token })).status,
        401,
      );

      const late = await untilConsent(browser, { clientId: flow.clientId });
      const lateCode = (await approve(browser, late.secret)).get('code')!;
      t.clock.advance(61_000);
      const expired = await tokenRequest(t.baseUrl, {
        grant_type: 'authorization_code',
        code: lateCode,
        redirect_uri: REDIRECT,
        client_id: flow.clientId,
        code_verifier: late.verifier,
      });
      assert.equal(expired.status, 400);
      assert.equal(expired.body.error, 'invalid_grant');
      assert.match(expired.body.error_description, /expired/);
      assert.equal((await row(late.secret)).token_id, null);
    });

    test('registration: exact redirect URIs checked, rate limited per IP, unused registrations expire', async () => {
      for (const redirect_uris of [
        [],
        ['http://example.com/cb'],
        ['https://ok.example/cb#frag'],
        ['javascript:alert(1)'],
      ]) {
        const refused = await registerClient(t.baseUrl, { redirect_uris });
        assert.equal(refused.status, 400, JSON.stringify(redirect_uris));
        assert.equal(refused.body.error, 'invalid_redirect_uri');
      }
      const registered = await registerClient(t.baseUrl, {
        client_name: 'Unused',
        redirect_uris: ['https://app.example/cb', 'com.example.app:/cb'],
      });
      assert.equal(registered.status, 201);
      assert.equal(registered.body.token_endpoint_auth_method, 'none');
      const member = await t.member('member');
      const browser = await signInThroughOutbox(t, member.email);
      t.clock.advance(25 * 3_600_000);
      const gone = await authorize(browser, {
        response_type: 'code',
        client_id: registered.body.client_id,
        redirect_uri: 'https://app.example/cb',
        code_challenge: pkce().challenge,
        code_challenge_method: 'S256',
      });
      assert.equal(gone.status, 400, 'a registration unused for a day is forgotten');
      const stale = await t.deps.db.selectFrom('oauth_authorizations').select('id').execute();
      assert.ok(stale.length > 0);
      const fresh = await untilConsent(browser);
      const kept = await t.deps.db.selectFrom('oauth_authorizations').select('id').execute();
      assert.deepEqual(
        kept.map((row) => row.id),
        [(await row(fresh.secret)).id],
        'requests expired more than a day ago are swept when a new one starts',
      );
      let status = 201;
      for (let i = 0; i < 12 && status !== 429; i++)
        status = (await registerClient(t.baseUrl, { redirect_uris: [REDIRECT] })).status;
      assert.equal(status, 429);
    });

    test('authorization requests are limited per IP: past the limit a 429 page, nothing stored', async () => {
      t.clock.advance(60_000);
      const browser = await signInThroughOutbox(t, (await t.member('member')).email);
      const clientId = await client();
      const request = () =>
        authorize(browser, {
          response_type: 'code',
          client_id: clientId,
          redirect_uri: REDIRECT,
          code_challenge: pkce().challenge,
          code_challenge_method: 'S256',
        });
      const limit = t.deps.config.limits.oauthAuthorizationsPerMinute;
      for (let i = 0; i < limit; i++) assert.equal((await request()).status, 303);
      const before = await t.deps.db.selectFrom('oauth_authorizations').select('id').execute();
      const refused = await request();
      assert.equal(refused.status, 429);
      assert.match(refused.text, /Too many authorization requests/);
      const afterwards = await t.deps.db.selectFrom('oauth_authorizations').select('id').execute();
      assert.equal(afterwards.length, before.length);
    });
  });
}
