import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import * as oauth from 'oauth4webapi';
import { a2aClient } from './support/a2a.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: LATEST_PROTOCOL_VERSION,
    capabilities: {},
    clientInfo: { name: 't', version: '1' },
  },
};
const TOOLS_LIST = { jsonrpc: '2.0', id: 2, method: 'tools/list' };

async function mcpPost(t: TestApp, message: unknown, token?: string) {
  const response = await fetch(`${t.baseUrl}/api/mcp`, {
    method: 'POST',
    headers: {
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify(message),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

for (const engine of engines) {
  describe(`OAuth metadata and challenges per surface (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    const a2a = a2aClient(() => t);
    before(async () => {
      t = await startTestApp({ engine: engine.name });
    });
    after(() => t?.close());

    const documentOf = (surface: string) => `${t.baseUrl}/.well-known/oauth-protected-resource${surface}`;

    test('each surface has RFC 9728 metadata naming itself; a strict client (oauth4webapi) accepts all three', async () => {
      for (const [path, resource] of [
        ['', t.baseUrl],
        ['/api/mcp', `${t.baseUrl}/api/mcp`],
        ['/api/a2a', `${t.baseUrl}/api/a2a`],
      ]) {
        const response = await oauth.resourceDiscoveryRequest(new URL(resource), {
          [oauth.allowInsecureRequests]: true,
        });
        const metadata = await oauth.processResourceDiscoveryResponse(new URL(resource), response);
        assert.equal(metadata.resource, resource);
        assert.deepEqual(metadata.authorization_servers, [t.baseUrl]);
        const raw = await t.call('GET', `/.well-known/oauth-protected-resource${path}`);
        assert.equal(raw.body.resource, resource);
      }
    });

    test('RFC 8414 metadata names the endpoints actually served, PKCE S256 only', async () => {
      const response = await oauth.discoveryRequest(new URL(t.baseUrl), {
        algorithm: 'oauth2',
        [oauth.allowInsecureRequests]: true,
      });
      const metadata = await oauth.processDiscoveryResponse(new URL(t.baseUrl), response);
      assert.equal(metadata.authorization_endpoint, `${t.baseUrl}/oauth/authorize`);
      assert.equal(metadata.token_endpoint, `${t.baseUrl}/oauth/token`);
      assert.equal(metadata.registration_endpoint, `${t.baseUrl}/oauth/register`);
      assert.deepEqual(metadata.code_challenge_methods_supported, ['S256']);
      assert.deepEqual(metadata.grant_types_supported, [
        'authorization_code',
        'urn:ietf:params:oauth:grant-type:device_code',
      ]);
      assert.deepEqual(metadata.response_types_supported, ['code']);
      for (const endpoint of ['/oauth/register', '/oauth/token']) {
        const preflight = await fetch(`${t.baseUrl}${endpoint}`, {
          method: 'OPTIONS',
          headers: { origin: 'http://localhost:6274', 'access-control-request-method': 'POST' },
        });
        assert.equal(preflight.status, 204, endpoint);
        assert.equal(preflight.headers.get('access-control-allow-origin'), '*');
      }
      // The metadata is open to any origin; the consent page and the API's own paths are not.
      assert.equal(response.headers.get('access-control-allow-origin'), '*');
      for (const path of ['/oauth/authorize', '/oauth/tokens', '/api/events/upcoming', '/oauth']) {
        const other = await fetch(`${t.baseUrl}${path}`, { headers: { origin: 'http://localhost:6274' } });
        await other.arrayBuffer();
        assert.equal(other.headers.get('access-control-allow-origin'), null, path);
      }
    });

    test('MCP: a revoked or unknown token initializes as no token; a member tool then gets 401 with invalid_token', async () => {
      const member = await t.member('member');
      const token = await t.token(member, ['read:public']);
      assert.equal((await mcpPost(t, INITIALIZE, token)).status, 200, 'a valid token initializes');
      const revoked = await t.call('POST', '/api/agent/token/revoke', { token, body: {} });
      assert.equal(revoked.status, 200);
      const unknown = `agt_${'A'.repeat(43)}`;
      for (const [bearer, code] of [
        [token, 'token_revoked'],
        [unknown, 'invalid_token'],
        ['not-a-token', 'invalid_token'],
      ]) {
        // Public, as with no token (docs/decisions.md, "A bad bearer on a public call").
        for (const message of [INITIALIZE, TOOLS_LIST]) {
          const answer = await mcpPost(t, message, bearer);
          assert.equal(answer.status, 200);
          assert.equal(answer.headers.get('www-authenticate'), null);
        }
        const answer = await mcpPost(
          t,
          {
            jsonrpc: '2.0',
            id: 3,
            method: 'tools/call',
            params: { name: 'ic_get_my_membership', arguments: {} },
          },
          bearer,
        );
        assert.equal(answer.status, 401);
        const challenge = answer.headers.get('www-authenticate') ?? '';
        assert.match(challenge, /^Bearer error="invalid_token", /);
        assert.match(challenge, new RegExp(`resource_metadata="${documentOf('/api/mcp')}"`));
        assert.equal(answer.body.result.structuredContent.error, code);
      }
      const stored = await t.deps.db
        .selectFrom('tokens')
        .select('revoked_at')
        .where('member_id', '=', member.id)
        .executeTakeFirstOrThrow();
      assert.notEqual(stored.revoked_at, null);
    });

    test('MCP: no token initializes (public tools need none); a member tool then answers 401 with the challenge', async () => {
      assert.equal((await mcpPost(t, INITIALIZE)).status, 200);
      const call = await mcpPost(t, {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'ic_get_my_membership', arguments: {} },
      });
      assert.equal(call.status, 401);
      assert.equal(
        call.headers.get('www-authenticate'),
        `Bearer resource_metadata="${documentOf('/api/mcp')}"`,
      );
    });

    test('REST and A2A challenges point at their own documents', async () => {
      // REST: the catch-all challenges; operation-level 401s carry none (agent-rest-service §5.11).
      const unknownPath = await t.call('GET', '/api/no-such-thing');
      assert.equal(unknownPath.status, 401);
      assert.equal(
        unknownPath.headers.get('www-authenticate'),
        `Bearer resource_metadata="${documentOf('')}"`,
      );
      const missing = await t.call('GET', '/api/ingest/highlights/pending');
      assert.equal(missing.status, 401);
      assert.equal(missing.headers.get('www-authenticate'), null);
      const refused = await a2a.send('ic_get_my_membership', {}, `agt_${'C'.repeat(43)}`);
      assert.equal(refused.status, 401, refused.text);
      assert.equal(refused.body.error.code, -31401);
      assert.match(
        refused.headers.get('www-authenticate') ?? '',
        new RegExp(`resource_metadata="${documentOf('/api/a2a')}"`),
      );
    });
  });
}
