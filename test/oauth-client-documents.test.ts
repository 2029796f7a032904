import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sha256 } from '../src/secrets.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { signInThroughOutbox } from './support/browser.ts';
import { engines } from './support/databases.ts';
import { startLocalHttps } from './support/local-https.ts';
import { authorize, consentSecret, locationParams, pkce, tokenRequest } from './support/oauth-client.ts';

const REDIRECT = 'http://127.0.0.1:8976/callback';

/**
 * A host's web server, over HTTPS as the draft requires: its client ID metadata documents, good and
 * bad, and how often each was fetched.
 */
async function documentServer() {
  const hits = new Map<string, number>();
  let base = '';
  const documents: Record<
    string,
    (self: string) => { status?: number; headers?: Record<string, string>; body: string }
  > = {
    '/client.json': (self) => ({
      headers: { 'cache-control': 'max-age=600' },
      body: JSON.stringify({ client_id: self, client_name: 'Doc host', redirect_uris: [REDIRECT] }),
    }),
    '/uncached.json': (self) => ({
      headers: { 'cache-control': 'no-store' },
      body: JSON.stringify({ client_id: self, client_name: 'Fresh host', redirect_uris: [REDIRECT] }),
    }),
    '/other-id.json': () => ({
      body: JSON.stringify({ client_id: `${base}/client.json`, redirect_uris: [REDIRECT] }),
    }),
    '/secret.json': (self) => ({
      body: JSON.stringify({
        client_id: self,
        redirect_uris: [REDIRECT],
        token_endpoint_auth_method: 'client_secret_basic',
      }),
    }),
    '/huge.json': (self) => ({
      body: JSON.stringify({ client_id: self, redirect_uris: [REDIRECT], padding: 'x'.repeat(32 * 1024) }),
    }),
    '/moved.json': () => ({ status: 302, headers: { location: '/client.json' }, body: '' }),
  };
  const server = await startLocalHttps((request, response) => {
    const path = request.url ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const answer = documents[path]?.(`${base}${path}`);
    if (!answer) return response.writeHead(404).end();
    response
      .writeHead(answer.status ?? 200, { 'content-type': 'application/json', ...answer.headers })
      .end(answer.body);
  });
  base = server.base;
  return { base, hits, close: server.close };
}

for (const engine of engines) {
  describe(`OAuth client ID metadata documents (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    let strict: TestApp;
    let host: Awaited<ReturnType<typeof documentServer>>;
    before(async () => {
      host = await documentServer();
      t = await startTestApp({
        engine: engine.name,
        config: { oauthClientDocumentsFromPrivateAddresses: true },
      });
      strict = await startTestApp({ engine: engine.name });
    });
    after(async () => {
      await t?.close();
      await strict?.close();
      await host?.close();
    });

    test('a client whose client_id is its document URL goes through authorize, consent and token', async () => {
      const metadata = await t.call('GET', '/.well-known/oauth-authorization-server');
      assert.equal(metadata.body.client_id_metadata_document_supported, true);
      const member = await t.member('member');
      const browser = await signInThroughOutbox(t, member.email);
      const clientId = `${host.base}/client.json`;
      const { verifier, challenge } = pkce();
      const started = await authorize(browser, {
        response_type: 'code',
        client_id: clientId,
        redirect_uri: REDIRECT,
        scope: 'read:public membership:read',
        state: 'doc',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      });
      assert.equal(started.status, 303, started.text);
      const secret = consentSecret(started.headers.get('location'));
      const review = await browser.request('GET', `/oauth/consent?request=${secret}`);
      assert.match(review.text, /Doc host/);
      assert.match(review.text, new RegExp(clientId.replace(/[.]/g, '\\.')));
      const decided = await browser.request('POST', '/oauth/consent', {
        request: secret,
        decision: 'approve',
        csrf: browser.csrf,
      });
      const code = locationParams(decided.headers.get('location')).get('code')!;
      const token = await tokenRequest(t.baseUrl, {
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT,
        client_id: clientId,
        code_verifier: verifier,
      });
      assert.equal(token.status, 200, JSON.stringify(token.body));
      const stored = await t.deps.db
        .selectFrom('tokens')
        .selectAll()
        .where('hash', '=', sha256(token.body.access_token))
        .executeTakeFirstOrThrow();
      assert.equal(stored.name, 'Doc host');
      assert.equal(stored.source, 'oauth');
    });

    test('documents refused: another client_id, a confidential client, too large, a redirect, an unlisted redirect URI', async () => {
      const member = await t.member('member');
      const browser = await signInThroughOutbox(t, member.email);
      const before = await t.deps.db.selectFrom('oauth_authorizations').select('id').execute();
      for (const [path, redirect, message] of [
        ['/other-id.json', REDIRECT, /names another client_id/],
        ['/secret.json', REDIRECT, /not a public client/],
        ['/huge.json', REDIRECT, /more than 16384 bytes/],
        ['/moved.json', REDIRECT, /redirect/],
        ['/missing.json', REDIRECT, /answered 404/],
        [
          '/client.json',
          'http://127.0.0.1:8976/elsewhere',
          /redirect address is not one the application registered/,
        ],
      ] as const) {
        const refused = await authorize(browser, {
          response_type: 'code',
          client_id: `${host.base}${path}`,
          redirect_uri: redirect,
          code_challenge: pkce().challenge,
          code_challenge_method: 'S256',
        });
        assert.equal(refused.status, 400, path);
        assert.equal(refused.headers.get('location'), null);
        assert.match(refused.text, message, path);
      }
      const afterwards = await t.deps.db.selectFrom('oauth_authorizations').select('id').execute();
      assert.equal(afterwards.length, before.length);
    });

    test('a document is kept as its Cache-Control allows; a dot-segment client_id is no document URL', async () => {
      const member = await t.member('member');
      const browser = await signInThroughOutbox(t, member.email);
      const start = (clientId: string) =>
        authorize(browser, {
          response_type: 'code',
          client_id: clientId,
          redirect_uri: REDIRECT,
          code_challenge: pkce().challenge,
          code_challenge_method: 'S256',
        });
      const cachedBefore = host.hits.get('/client.json') ?? 0;
      for (let i = 0; i < 3; i++) assert.equal((await start(`${host.base}/client.json`)).status, 303);
      // max-age=600: fetched at most once for the three (once here unless an earlier test fetched it).
      assert.ok((host.hits.get('/client.json') ?? 0) - cachedBefore <= 1);
      t.clock.advance(11 * 60_000);
      assert.equal((await start(`${host.base}/client.json`)).status, 303);
      assert.ok((host.hits.get('/client.json') ?? 0) > cachedBefore, 'fetched again once stale');
      for (let i = 0; i < 2; i++) assert.equal((await start(`${host.base}/uncached.json`)).status, 303);
      assert.equal(host.hits.get('/uncached.json'), 2, 'no-store: fetched every time');

      const dotted = await start(`${host.base}/docs/../client.json`);
      assert.equal(dotted.status, 400);
      assert.match(dotted.text, /unknown client_id/);
    });

    test('by default a document on a private address is never fetched', async () => {
      const member = await strict.member('member');
      const browser = await signInThroughOutbox(strict, member.email);
      const fetched = host.hits.get('/client.json') ?? 0;
      for (const clientId of [`${host.base}/client.json`, `https://127.0.0.1:1/client.json`]) {
        const refused = await authorize(browser, {
          response_type: 'code',
          client_id: clientId,
          redirect_uri: REDIRECT,
          code_challenge: pkce().challenge,
          code_challenge_method: 'S256',
        });
        assert.equal(refused.status, 400, clientId);
        assert.match(refused.text, /unknown client_id|loopback, private or link-local/, clientId);
      }
      assert.equal(host.hits.get('/client.json') ?? 0, fetched, 'no connection was made');
    });
  });
}
