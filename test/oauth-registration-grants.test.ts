import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sha256 } from '../src/secrets.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { signInThroughOutbox } from './support/browser.ts';
import { engines } from './support/databases.ts';
import { authorize, pkce, registerClient } from './support/oauth-client.ts';

/**
 * One rule for the two grants (docs/decisions.md, "The device grant and client registration"):
 * /oauth/register registers a client for the authorization code, the device grant or both; the device
 * endpoint needs no registration, and shows a registered client by the name it registered.
 */
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

for (const engine of engines) {
  describe(`OAuth registration and the device grant (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine: engine.name });
    });
    after(() => t?.close());

    async function startDevice(fields: Record<string, string>) {
      const response = await fetch(`${t.baseUrl}/oauth/device_authorization`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(fields).toString(),
      });
      const body = (await response.json()) as Record<string, any>;
      const row = body.device_code
        ? await t.deps.db
            .selectFrom('device_grants')
            .select('client_name')
            .where('device_code_hash', '=', sha256(body.device_code))
            .executeTakeFirstOrThrow()
        : undefined;
      return { status: response.status, body, clientName: row?.client_name };
    }

    test('registration takes the device grant, alone (no redirect URI) or beside the code grant', async () => {
      const deviceOnly = await registerClient(t.baseUrl, {
        client_name: 'Terminal agent',
        grant_types: [DEVICE_GRANT],
      });
      assert.equal(deviceOnly.status, 201, JSON.stringify(deviceOnly.body));
      assert.deepEqual(deviceOnly.body.grant_types, [DEVICE_GRANT]);
      assert.deepEqual(deviceOnly.body.redirect_uris, []);
      assert.deepEqual(deviceOnly.body.response_types, []);

      const both = await registerClient(t.baseUrl, {
        client_name: 'Both ways',
        redirect_uris: ['http://127.0.0.1:7777/cb'],
        grant_types: ['authorization_code', DEVICE_GRANT],
      });
      assert.equal(both.status, 201, JSON.stringify(both.body));
      assert.deepEqual(both.body.grant_types, ['authorization_code', DEVICE_GRANT]);

      // The code grant still needs its redirect URIs; a grant served nowhere here is refused.
      const noRedirect = await registerClient(t.baseUrl, { grant_types: ['authorization_code'] });
      assert.equal(noRedirect.status, 400);
      assert.equal(noRedirect.body.error, 'invalid_redirect_uri');
      const refresh = await registerClient(t.baseUrl, {
        redirect_uris: ['http://127.0.0.1:7777/cb'],
        grant_types: ['authorization_code', 'refresh_token'],
      });
      assert.equal(refresh.status, 400);
      assert.equal(refresh.body.error, 'invalid_client_metadata');

      // A device-only client redirects nowhere: the authorization endpoint has no redirect URI for it.
      const member = await t.member('member');
      const browser = await signInThroughOutbox(t, member.email);
      const refused = await authorize(browser, {
        response_type: 'code',
        client_id: deviceOnly.body.client_id,
        redirect_uri: 'http://127.0.0.1:7777/cb',
        code_challenge: pkce().challenge,
        code_challenge_method: 'S256',
      });
      assert.equal(refused.status, 400);
      assert.equal(refused.headers.get('location'), null);

      // The device endpoint shows a registered client by its registered name, for either registration.
      for (const [client, name] of [
        [deviceOnly.body.client_id, 'Terminal agent'],
        [both.body.client_id, 'Both ways'],
      ]) {
        const started = await startDevice({ client_id: client, scope: 'read:public' });
        assert.equal(started.status, 200, JSON.stringify(started.body));
        assert.equal(started.clientName, name);
      }
    });

    test('the device grant needs no registration: an unknown client_id is its unverified name', async () => {
      const started = await startDevice({ client_id: 'my-cli', scope: 'read:public' });
      assert.equal(started.status, 200, JSON.stringify(started.body));
      assert.equal(started.clientName, 'my-cli');
      const anonymous = await startDevice({ scope: 'read:public' });
      assert.equal(anonymous.status, 200);
      assert.equal(anonymous.clientName, null);
    });
  });
}
