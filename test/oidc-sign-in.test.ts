import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../src/config.ts';
import { OIDC_LOGIN_TTL_MS } from '../src/domain/auth/oidc-logins.ts';
import { sha256 } from '../src/secrets.ts';
import { closedPort, holdPort, startTestApp, type TestApp } from './support/app.ts';
import { Browser } from './support/browser.ts';
import { engines } from './support/databases.ts';
import { type LocalOidcProvider, startOidcProvider } from './support/oidc-provider.ts';

// The login rows live in the database: both engines spend them once.
for (const engine of engines) {
  describe(`OpenID Connect callback checks (${engine.name})`, { skip: engine.skip }, () => {
    let provider: LocalOidcProvider;
    let t: TestApp;
    before(async () => {
      const port = await holdPort();
      provider = await startOidcProvider([`http://127.0.0.1:${port.port}/signin/oidc/callback`]);
      t = await startTestApp({
        engine: engine.name,
        port,
        config: {
          oidc: {
            issuer: provider.issuer,
            clientId: provider.clientId,
            clientSecret: provider.clientSecret,
            label: 'Sign in with Example ID',
          },
        },
      });
    });
    after(async () => {
      await t?.close();
      await provider?.close();
    });

    /** Starts a login as a browser does; returns the browser and the authorization request it was sent to. */
    async function startLogin(next = '/membership') {
      const browser = new Browser(t.baseUrl);
      const started = await browser.request('GET', `/signin/oidc?next=${encodeURIComponent(next)}`);
      assert.equal(started.status, 303);
      const authorization = new URL(started.headers.get('location')!);
      return { browser, started, authorization, state: authorization.searchParams.get('state')! };
    }

    const sessionCount = async () =>
      (await t.deps.db.selectFrom('sessions').select('id_hash').execute()).length;

    test('the sign-in page offers the provider, and the start sends the browser there with PKCE, state and nonce', async () => {
      const page = await new Browser(t.baseUrl).request('GET', '/signin?next=%2F%2Fevil.example');
      assert.match(page.text, /<form method="get" action="\/signin\/oidc">/);
      assert.match(page.text, /Sign in with Example ID/);
      assert.match(page.text, /name="next" value="\/signin"/, 'next stays on this site');

      const { browser, started, authorization, state } = await startLogin('https://evil.example/');
      assert.equal(authorization.origin + authorization.pathname, `${provider.issuer}/auth`);
      const query = authorization.searchParams;
      assert.equal(query.get('client_id'), provider.clientId);
      assert.equal(query.get('redirect_uri'), `${t.baseUrl}/signin/oidc/callback`);
      assert.equal(query.get('response_type'), 'code');
      assert.equal(query.get('code_challenge_method'), 'S256');
      assert.match(query.get('code_challenge') ?? '', /^[A-Za-z0-9_-]{43}$/);
      assert.match(query.get('nonce') ?? '', /^[A-Za-z0-9_-]{43}$/);
      assert.equal(started.headers.get('cache-control'), 'no-store');
      const cookie = started.headers.getSetCookie().find((line) => line.startsWith('__oidc_login='));
      const attributes = (cookie ?? '').split('; ').slice(1);
      for (const attribute of ['HttpOnly', 'SameSite=Lax', 'Max-Age=600', 'Path=/'])
        assert.ok(attributes.includes(attribute), attribute);

      const secret = browser.cookies.get('__oidc_login')!;
      const row = await t.deps.db
        .selectFrom('oidc_logins')
        .selectAll()
        .where('state_hash', '=', sha256(state))
        .executeTakeFirstOrThrow();
      assert.equal(row.browser_hash, sha256(secret));
      assert.equal(row.next_path, '/signin', 'a next on another site becomes /signin');
      const stored = JSON.stringify(await t.deps.db.selectFrom('oidc_logins').selectAll().execute());
      for (const plain of [state, secret, query.get('nonce')!])
        assert.ok(!stored.includes(plain), 'login secrets are stored hashed only');
    });

    test('a wrong, missing or foreign state is a 400 page and opens no session', async () => {
      const before = await sessionCount();
      const { browser, state } = await startLogin();
      const secret = browser.cookies.get('__oidc_login')!;
      const callback = (query: string, cookie: string) =>
        fetch(`${t.baseUrl}/signin/oidc/callback?${query}`, { redirect: 'manual', headers: { cookie } });
      const cases: [string, Response][] = [
        ['wrong state', await callback('code=abc&state=not-the-state', `__oidc_login=${secret}`)],
        ['missing state', await callback('code=abc', `__oidc_login=${secret}`)],
        ['no state and no cookie', await callback('', '')],
        ['another browser', await callback(`code=abc&state=${state}`, '')],
        ['another browser with its own login', await callback(`code=abc&state=${state}`, '__oidc_login=x')],
      ];
      for (const [label, response] of cases) {
        assert.equal(response.status, 400, label);
        assert.match(await response.text(), /no longer valid/, label);
        assert.ok(!response.headers.getSetCookie().some((line) => line.startsWith('__session=')), label);
      }
      assert.equal(await sessionCount(), before);
    });

    test('a forged code is refused by the provider (400), and the state cannot be tried twice', async () => {
      const before = await sessionCount();
      const { browser, state } = await startLogin();
      // With the issuer named (RFC 9207, as this provider does), the forged code reaches the token endpoint.
      const iss = encodeURIComponent(provider.issuer);
      const forged = await browser.request(
        'GET',
        `/signin/oidc/callback?code=forged-code&state=${state}&iss=${iss}`,
      );
      assert.equal(forged.status, 400);
      assert.match(forged.text, /did not sign you in/);
      assert.ok(provider.requests.includes('/token'), 'the code went to the real token endpoint');
      const again = await fetch(
        `${t.baseUrl}/signin/oidc/callback?code=forged-code&state=${state}&iss=${iss}`,
        {
          headers: { cookie: `__oidc_login=${browser.cookies.get('__oidc_login') ?? ''}` },
        },
      );
      assert.equal(again.status, 400);
      assert.equal(await sessionCount(), before);
    });

    test('a login left at the provider expires after 10 minutes', async () => {
      const { browser, state } = await startLogin();
      t.clock.advance(OIDC_LOGIN_TTL_MS + 1);
      const late = await browser.request('GET', `/signin/oidc/callback?code=abc&state=${state}`);
      assert.equal(late.status, 400);
      assert.match(late.text, /no longer valid/);
    });

    test('an error from the provider is a 4xx page', async () => {
      const { browser, state } = await startLogin();
      const failed = await browser.request(
        'GET',
        `/signin/oidc/callback?error=server_error&state=${state}&iss=${encodeURIComponent(provider.issuer)}`,
      );
      assert.equal(failed.status, 400);
      assert.match(failed.text, /<code>server_error<\/code>/);
    });
  });
}

describe('OpenID Connect with the provider down', () => {
  let t: TestApp;
  before(async () => {
    const nobody = await closedPort();
    t = await startTestApp({
      config: {
        oidc: { issuer: `http://127.0.0.1:${nobody}`, clientId: 'c', clientSecret: 's', label: 'SSO' },
      },
    });
  });
  after(() => t?.close());

  test('starting a sign-in is a 424 page, never a 5xx, and stores nothing', async () => {
    const started = await new Browser(t.baseUrl).request('GET', '/signin/oidc');
    assert.equal(started.status, 424);
    assert.match(started.text, /did not answer/);
    assert.equal((await t.deps.db.selectFrom('oidc_logins').selectAll().execute()).length, 0);
  });
});

describe('OpenID Connect configuration', () => {
  test('off unless both the issuer and the client id are set', () => {
    assert.equal(loadConfig({}).oidc, undefined);
    assert.throws(() => loadConfig({ OIDC_ISSUER: 'https://id.example' }), /OIDC_CLIENT_ID/);
    assert.throws(() => loadConfig({ OIDC_CLIENT_ID: 'agent-commons' }), /OIDC_ISSUER/);
    assert.deepEqual(loadConfig({ OIDC_ISSUER: 'https://id.example', OIDC_CLIENT_ID: 'c' }).oidc, {
      issuer: 'https://id.example',
      clientId: 'c',
      clientSecret: undefined,
      label: 'Sign in with single sign-on',
    });
  });

  test('plain http only for a provider on this machine', () => {
    assert.throws(() => loadConfig({ OIDC_ISSUER: 'http://id.example', OIDC_CLIENT_ID: 'c' }), /https/);
    assert.throws(() => loadConfig({ OIDC_ISSUER: 'not a url', OIDC_CLIENT_ID: 'c' }), /URL/);
    assert.ok(loadConfig({ OIDC_ISSUER: 'http://127.0.0.1:4000', OIDC_CLIENT_ID: 'c' }).oidc);
  });

  test('without it the sign-in page has no button and the routes do not exist', async () => {
    const t = await startTestApp();
    try {
      const page = await new Browser(t.baseUrl).request('GET', '/signin');
      assert.doesNotMatch(page.text, /signin\/oidc/);
      assert.equal((await fetch(`${t.baseUrl}/signin/oidc`, { redirect: 'manual' })).status, 404);
    } finally {
      await t.close();
    }
  });
});
