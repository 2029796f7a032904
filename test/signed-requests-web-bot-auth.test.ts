import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createSession, SESSION_COOKIE } from '../src/domain/auth/sessions.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';
import { type ClientKey, newClientKey, webBotAuthFetch, webBotAuthHeaders } from './support/signer.ts';

const REFUSED = 'signature verification failed: ';
/** What a web-bot-auth agent names as its key directory; the service covers it and does not fetch it. */
const SIGNATURE_AGENT = '"https://agent.example/.well-known/http-message-signatures-directory"';

for (const engine of engines) {
  describe(`signed requests, the web-bot-auth signer (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    let token: string;
    let key: ClientKey;
    let client: Client | undefined;
    const now = () => new Date(t.clock.now());

    before(async () => {
      t = await startTestApp({ engine: engine.name });
      const member = await t.member('core', 'Web Bot');
      token = await t.token(member, ['membership:read', 'leaderboard:manage']);
      const rows = await t.deps.db.selectFrom('tokens').select(['id', 'prefix']).execute();
      const tokenId = (rows.find((row) => token.startsWith(row.prefix)) as { id: string }).id;
      const headers = { cookie: `${SESSION_COOKIE}=${await createSession(t.deps.db, t.clock, member.id)}` };
      key = newClientKey();
      const bound = await t.call('POST', '/api/agent/keys/register', {
        headers,
        body: { token_id: tokenId, jwk: key.jwk },
      });
      assert.equal(bound.status, 200, bound.text);
      await t.call('POST', '/api/agent/keys/enforce-toggle', {
        headers,
        body: { token_id: tokenId, enforce: true },
      });
    });
    after(async () => {
      await client?.close();
      await t?.close();
    });

    const signed = (method: string, path: string, body?: string, extra: Record<string, string> = {}) =>
      webBotAuthHeaders(
        {
          method,
          url: t.baseUrl + path,
          headers: {
            authorization: `Bearer ${token}`,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
            ...extra,
          },
          body,
        },
        key,
        now(),
      );

    test('REST: a GET with Signature-Agent covered and a POST with a body pass', async () => {
      const headers = await signed('GET', '/api/activity/me?limit=2', undefined, {
        'signature-agent': SIGNATURE_AGENT,
      });
      assert.match(headers['signature-input'], /tag="web-bot-auth"/);
      assert.match(headers['signature-input'], /"signature-agent"/);
      const get = await fetch(`${t.baseUrl}/api/activity/me?limit=2`, { headers });
      assert.equal(get.status, 200, await get.text());
      const body = '{"optIn":false}';
      const postHeaders = await signed('POST', '/api/leaderboard/optin', body);
      const post = await fetch(`${t.baseUrl}/api/leaderboard/optin`, {
        method: 'POST',
        headers: postHeaders,
        body,
      });
      assert.equal(post.status, 200, await post.text());
    });

    test('MCP: the SDK client, every request signed by web-bot-auth, calls a tool', async () => {
      client = new Client({ name: 'web-bot-auth-agent', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${t.baseUrl}/api/mcp`), {
          requestInit: { headers: { Authorization: `Bearer ${token}` } },
          fetch: webBotAuthFetch(key, now),
        }),
      );
      const result = await client.callTool({ name: 'ic_get_my_membership', arguments: {} });
      assert.equal(result.isError ?? false, false, JSON.stringify(result));
      assert.equal((result.structuredContent as { tier: string }).tier, 'core');
    });

    test('A2A: tasks/send signed by web-bot-auth passes; the same request replayed is refused', async () => {
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: 3,
        method: 'tasks/send',
        params: { capability: 'ic_get_my_membership', arguments: {} },
      });
      const headers = await signed('POST', '/api/a2a', body);
      const answer = await (await fetch(`${t.baseUrl}/api/a2a`, { method: 'POST', headers, body })).json();
      assert.equal(answer.result?.tier, 'core', JSON.stringify(answer));
      const replay = await (await fetch(`${t.baseUrl}/api/a2a`, { method: 'POST', headers, body })).json();
      assert.ok(JSON.stringify(replay).includes(`${REFUSED}nonce already used`), JSON.stringify(replay));
    });

    test('REST: a replayed web-bot-auth nonce is refused', async () => {
      const headers = await signed('GET', '/api/activity/me');
      assert.equal((await fetch(`${t.baseUrl}/api/activity/me`, { headers })).status, 200);
      const replay = await fetch(`${t.baseUrl}/api/activity/me`, { headers });
      assert.equal(replay.status, 401);
      assert.equal((await replay.json()).error, `${REFUSED}nonce already used`);
    });

    test('web-bot-auth’s own default components (@authority alone) are refused, naming the profile’s', async () => {
      const headers = await webBotAuthHeaders(
        { method: 'GET', url: `${t.baseUrl}/api/activity/me`, headers: { authorization: `Bearer ${token}` } },
        key,
        now(),
        ['@authority'],
      );
      const answer = await fetch(`${t.baseUrl}/api/activity/me`, { headers });
      assert.equal(answer.status, 401);
      assert.equal(
        (await answer.json()).error,
        `${REFUSED}the covered component "@method" is missing (the profile covers @method @authority @target-uri)`,
      );
    });

    test('a tag other than web-bot-auth’s, or signature-agent covered without the header, is refused', async () => {
      const headers = await signed('GET', '/api/activity/me');
      const retagged = {
        ...headers,
        'signature-input': headers['signature-input'].replace('tag="web-bot-auth"', 'tag="another-app"'),
      };
      const answer = await (await fetch(`${t.baseUrl}/api/activity/me`, { headers: retagged })).json();
      assert.equal(answer.error, `${REFUSED}tag "another-app" is not accepted: only "web-bot-auth", or none`);
      const withAgent = await signed('GET', '/api/activity/me', undefined, {
        'signature-agent': SIGNATURE_AGENT,
      });
      delete withAgent['signature-agent'];
      const dropped = await (await fetch(`${t.baseUrl}/api/activity/me`, { headers: withAgent })).json();
      assert.equal(
        dropped.error,
        `${REFUSED}the covered component "signature-agent" is covered but the request has no such header`,
      );
    });
  });
}
