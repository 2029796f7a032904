import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as client from 'openid-client';
import { sha256 } from '../src/secrets.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { signInThroughOutbox } from './support/browser.ts';
import { engines } from './support/databases.ts';
import { consentSecret, locationParams } from './support/oauth-client.ts';

const REDIRECT = 'http://127.0.0.1:9/callback';

for (const engine of engines) {
  describe(`openid-client runs authorization code with PKCE (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine: engine.name });
    });
    after(() => t?.close());

    test('dynamic registration, authorization URL, consent, code grant with the verifier and the state checked', async () => {
      const options = { execute: [client.allowInsecureRequests], algorithm: 'oauth2' as const };
      const config = await client.dynamicClientRegistration(
        new URL(t.baseUrl),
        { client_name: 'openid-client test', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' },
        client.None(),
        options,
      );
      const clientId = config.clientMetadata().client_id;
      assert.match(clientId, /^mcpc_/);
      const verifier = client.randomPKCECodeVerifier();
      const state = client.randomState();
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: REDIRECT,
        scope: 'read:public membership:read',
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        resource: `${t.baseUrl}/api/a2a`,
      });

      const member = await t.member('resident', 'Rosa');
      const browser = await signInThroughOutbox(t, member.email);
      const started = await browser.request('GET', url.pathname + url.search);
      assert.equal(started.status, 303);
      const secret = consentSecret(started.headers.get('location'));
      assert.equal((await browser.request('GET', `/oauth/consent?request=${secret}`)).status, 200);
      const decided = await browser.request('POST', '/oauth/consent', {
        request: secret,
        decision: 'approve',
        sandbox: 'yes',
        csrf: browser.csrf,
      });
      assert.equal(decided.status, 303);
      const callback = new URL(decided.headers.get('location')!);
      assert.equal(`${callback.origin}${callback.pathname}`, REDIRECT);
      assert.equal(locationParams(callback.toString()).get('state'), state);

      const tokens = await client.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: verifier,
        expectedState: state,
      });
      assert.equal(tokens.token_type.toLowerCase(), 'bearer');
      assert.equal(tokens.scope, 'read:public membership:read');
      const stored = await t.deps.db
        .selectFrom('tokens')
        .selectAll()
        .where('hash', '=', sha256(tokens.access_token))
        .executeTakeFirstOrThrow();
      assert.equal(stored.sandbox, 1, 'the member chose a sandbox token');
      assert.equal(stored.name, 'openid-client test');
      const check = await t.call('GET', '/api/agent/setup-check', { token: tokens.access_token });
      assert.equal(check.status, 200, check.text);

      // A second use of the same callback (the code) is refused, and the token it became is revoked.
      await assert.rejects(
        client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state }),
        (error: Error & { error?: string }) => error.error === 'invalid_grant',
      );
      const revoked = await t.deps.db
        .selectFrom('tokens')
        .select('revoked_at')
        .where('id', '=', stored.id)
        .executeTakeFirstOrThrow();
      assert.notEqual(revoked.revoked_at, null);
    });
  });
}
