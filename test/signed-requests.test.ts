import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createSession, SESSION_COOKIE } from '../src/domain/auth/sessions.ts';
import type { Member } from '../src/domain/members/members.ts';
import { contentDigestOf } from '../src/operations/pipeline/signature-base.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';
import {
  type ClientKey,
  newClientKey,
  type SignOptions,
  signingFetch,
  signRequest,
} from './support/signer.ts';

const REFUSED = 'signature verification failed: ';

for (const engine of engines) {
  describe(`signed requests, RFC 9421 (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    let member: Member;
    let token: string;
    let tokenId: string;
    let key: ClientKey;
    let session: { cookie: string };
    const clients: Client[] = [];

    before(async () => {
      t = await startTestApp({ engine: engine.name });
      member = await t.member('core', 'Sig Ner');
      token = await t.token(member, ['membership:read', 'leaderboard:manage']);
      const rows = await t.deps.db.selectFrom('tokens').select(['id', 'prefix']).execute();
      tokenId = (rows.find((row) => token.startsWith(row.prefix)) as { id: string }).id;
      session = { cookie: `${SESSION_COOKIE}=${await createSession(t.deps.db, t.clock, member.id)}` };
      key = newClientKey();
      const bound = await t.call('POST', '/api/agent/keys/register', {
        headers: session,
        body: { token_id: tokenId, jwk: key.jwk },
      });
      assert.equal(bound.status, 200, bound.text);
    });
    after(async () => {
      await Promise.all(clients.map((client) => client.close()));
      await t?.close();
    });

    const now = () => new Date(t.clock.now());
    const enforce = (on: boolean) =>
      t.call('POST', '/api/agent/keys/enforce-toggle', {
        headers: session,
        body: { token_id: tokenId, enforce: on },
      });

    /**
     * Sends `sent` with the headers a client computed for `signed` (by default the same request): a
     * test changes what is sent after signing by giving the two apart.
     */
    async function send(
      sent: { method: string; path: string; body?: string },
      options: Partial<SignOptions> = {},
      signed: { method?: string; url?: string; body?: string } = {},
      edit?: (headers: Record<string, string>) => void,
    ) {
      const headers = await signRequest(
        {
          method: signed.method ?? sent.method,
          url: signed.url ?? t.baseUrl + sent.path,
          headers: {
            authorization: `Bearer ${token}`,
            ...(sent.body !== undefined ? { 'content-type': 'application/json' } : {}),
          },
          body: signed.body ?? sent.body,
        },
        { key, created: now(), ...options },
      );
      edit?.(headers);
      const response = await fetch(t.baseUrl + sent.path, { method: sent.method, headers, body: sent.body });
      const text = await response.text();
      return {
        status: response.status,
        body: text ? JSON.parse(text) : undefined,
        headers: response.headers,
      };
    }

    const getActivity = { method: 'GET', path: '/api/activity/me?limit=5' };
    const optOut = { method: 'POST', path: '/api/leaderboard/optin', body: '{"optIn":false}' };

    test('enforcement off: unsigned calls pass, signed ones are verified', async () => {
      const unsigned = await t.call('GET', '/api/activity/me', { token });
      assert.equal(unsigned.status, 200);
      const signedGet = await send(getActivity);
      assert.equal(signedGet.status, 200, JSON.stringify(signedGet.body));
      const signedPost = await send(optOut);
      assert.equal(signedPost.status, 200, JSON.stringify(signedPost.body));
      assert.equal(signedPost.body.opted_in ?? signedPost.body.optIn ?? false, false);
      // A signature that is sent is checked even while enforcement is off.
      const wrong = await send(getActivity, { created: new Date(t.clock.now() - 120_000) });
      assert.equal(wrong.status, 401);
      assert.equal(wrong.body.error, `${REFUSED}created is 120 s in the past (at most 60 s accepted)`);
      assert.equal(wrong.body.ok, false);
    });

    test('enforcement on: an unsigned call is refused, a signed one passes', async () => {
      assert.equal((await enforce(true)).status, 200);
      const unsigned = await t.call('GET', '/api/activity/me', { token });
      assert.equal(unsigned.status, 401);
      assert.equal(
        unsigned.body.error,
        `${REFUSED}this token requires signed requests (enforcement is on) and the request carries no signature`,
      );
      const signed = await send(getActivity);
      assert.equal(signed.status, 200);
      assert.equal(signed.body.ok, true);
    });

    test('refused, each with its reason', async () => {
      await enforce(true);
      const other = newClientKey();
      const port = new URL(t.baseUrl).port;
      const cases: [string, Promise<{ status: number; body: any }>, string][] = [
        [
          'body changed, digest kept',
          send({ ...optOut, body: '{"optIn": true}' }, {}, { body: optOut.body }),
          'Content-Digest does not match the body',
        ],
        [
          'body and digest changed',
          send({ ...optOut, body: '{"optIn": true}' }, {}, { body: optOut.body }, (h) => {
            h['content-digest'] = contentDigestOf('{"optIn": true}');
          }),
          'the signature does not verify',
        ],
        ['method changed', send(getActivity, {}, { method: 'POST' }), 'the signature does not verify'],
        [
          'path changed',
          send(getActivity, {}, { url: `${t.baseUrl}/api/activity/mine?limit=5` }),
          'the signature does not verify',
        ],
        [
          'query changed',
          send(getActivity, {}, { url: `${t.baseUrl}/api/activity/me?limit=6` }),
          'the signature does not verify',
        ],
        [
          'authority changed',
          send(getActivity, {}, { url: `http://elsewhere.example:${port}/api/activity/me?limit=5` }),
          'the signature does not verify',
        ],
        [
          'created too old',
          send(getActivity, { created: new Date(t.clock.now() - 61_000) }),
          'created is 61 s in the past (at most 60 s accepted)',
        ],
        [
          'created in the future',
          send(getActivity, { created: new Date(t.clock.now() + 61_000) }),
          'created is 61 s in the future (at most 60 s accepted)',
        ],
        [
          'expired',
          send(getActivity, { expires: new Date(t.clock.now() - 2_000) }),
          'the signature expired 2 s ago',
        ],
        [
          'another key, the bound keyid',
          send(getActivity, { key: other, keyid: key.keyId }),
          'the signature does not verify',
        ],
        [
          'another key',
          send(getActivity, { key: other }),
          `keyid "${other.keyId}" is not the key bound to this token`,
        ],
        [
          'another algorithm',
          send(getActivity, { alg: 'rsa-pss-sha512' }),
          'alg "rsa-pss-sha512" is not accepted: only "ed25519"',
        ],
        [
          'another label',
          send(getActivity, { label: 'sig2' }),
          'Signature-Input has no signature labelled sig1',
        ],
        [
          'a missing component',
          send(getActivity, { fields: ['@method', '@target-uri'] }),
          'the covered component "@authority" is missing',
        ],
        [
          'an extra component',
          send(getActivity, { fields: ['@method', '@authority', '@target-uri', 'authorization'] }),
          'the covered component "authorization" is not part of the profile (@method @authority @target-uri)',
        ],
        [
          'content-digest not covered',
          send(optOut, { fields: ['@method', '@authority', '@target-uri'] }),
          'the covered component "content-digest" is missing',
        ],
        [
          'Content-Digest missing',
          send(optOut, {}, {}, (h) => {
            delete h['content-digest'];
          }),
          'the Content-Digest header is missing (RFC 9530, sha-256)',
        ],
        [
          'Content-Digest wrong',
          send(optOut, {}, {}, (h) => {
            h['content-digest'] = 'sha-256=:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=:';
          }),
          'Content-Digest does not match the body',
        ],
      ];
      for (const [name, answer, reason] of cases) {
        const { status, body } = await answer;
        assert.equal(status, 401, name);
        assert.ok(body.error.startsWith(`${REFUSED}${reason}`), `${name}: ${body.error}`);
        assert.equal(body.error_kind, 'signature', name);
      }
    });

    test('a nonce is accepted once', async () => {
      await enforce(true);
      const headers = await signRequest(
        { method: 'GET', url: `${t.baseUrl}/api/activity/me`, headers: { authorization: `Bearer ${token}` } },
        { key, created: now(), nonce: 'the-same-nonce' },
      );
      const first = await fetch(`${t.baseUrl}/api/activity/me`, { headers });
      assert.equal(first.status, 200);
      const replay = await fetch(`${t.baseUrl}/api/activity/me`, { headers });
      assert.equal(replay.status, 401);
      assert.equal((await replay.json()).error, `${REFUSED}nonce already used`);
      const stored = await t.deps.db.selectFrom('signature_nonces').select('nonce_key').execute();
      assert.ok(stored.length >= 1);
    });

    // Several instances share PostgreSQL only (on SQLite one process is the whole service).
    const onPostgres = engine.name === 'postgres' ? test : () => {};
    onPostgres('a nonce is accepted once across two instances on one database', async () => {
      await enforce(true);
      // A second server behind the same PUBLIC_URL, as a load balancer would have it.
      const second = await startTestApp({ database: t.database, config: { publicUrl: t.baseUrl } });
      try {
        const address = second.app.server.address() as { port: number };
        const headers = await signRequest(
          {
            method: 'GET',
            url: `${t.baseUrl}/api/activity/me`,
            headers: { authorization: `Bearer ${token}` },
          },
          { key, created: now(), nonce: 'one-nonce-two-servers' },
        );
        const first = await fetch(`${t.baseUrl}/api/activity/me`, { headers });
        assert.equal(first.status, 200);
        const replay = await fetch(`http://127.0.0.1:${address.port}/api/activity/me`, { headers });
        assert.equal(replay.status, 401);
        assert.equal((await replay.json()).error, `${REFUSED}nonce already used`);
        const fresh = await signRequest(
          {
            method: 'GET',
            url: `${t.baseUrl}/api/activity/me`,
            headers: { authorization: `Bearer ${token}` },
          },
          { key, created: now() },
        );
        assert.equal(
          (await fetch(`http://127.0.0.1:${address.port}/api/activity/me`, { headers: fresh })).status,
          200,
        );
      } finally {
        await second.close();
      }
    });

    test('a nonce is remembered across a restart', async () => {
      await enforce(true);
      const signedGet = (nonce: string) =>
        signRequest(
          {
            method: 'GET',
            url: `${t.baseUrl}/api/activity/me`,
            headers: { authorization: `Bearer ${token}` },
          },
          { key, created: now(), nonce },
        );
      const headers = await signedGet('before-the-restart');
      assert.equal((await fetch(`${t.baseUrl}/api/activity/me`, { headers })).status, 200);
      await t.restart();
      const replay = await fetch(`${t.baseUrl}/api/activity/me`, { headers });
      assert.equal(replay.status, 401);
      assert.equal((await replay.json()).error, `${REFUSED}nonce already used`);
      t.clock.advance(130_000);
      const later = await signedGet('later-on');
      assert.equal((await fetch(`${t.baseUrl}/api/activity/me`, { headers: later })).status, 200);
      const again = await fetch(`${t.baseUrl}/api/activity/me`, { headers: later });
      assert.equal(again.status, 401);
      assert.equal((await again.json()).error, `${REFUSED}nonce already used`);
    });

    test('MCP: a real MCP client whose requests are signed calls a tool; unsigned a member tool is refused', async () => {
      await enforce(true);
      const client = new Client({ name: 'signed-agent', version: '1.0.0' });
      const transport = new StreamableHTTPClientTransport(new URL(`${t.baseUrl}/api/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
        fetch: signingFetch(key, now),
      });
      await client.connect(transport);
      clients.push(client);
      const result = await client.callTool({ name: 'ic_get_my_membership', arguments: {} });
      assert.equal(result.isError ?? false, false, JSON.stringify(result));
      assert.equal((result.structuredContent as { tier: string }).tier, 'core');

      const unsigned = await fetch(`${t.baseUrl}/api/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/json, text/event-stream',
          'content-type': 'application/json',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'ic_get_my_membership', arguments: {} },
        }),
      });
      const text = await unsigned.text();
      assert.equal(unsigned.status, 401);
      assert.ok(text.includes(`${REFUSED}this token requires signed requests`), text);

      // initialize is public: an unsigned call with the token is read as one with no token, as a
      // public REST operation reads it (docs/decisions.md, "A bad bearer on a public call").
      const unsignedInitialize = await fetch(`${t.baseUrl}/api/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/json, text/event-stream',
          'content-type': 'application/json',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: {
            protocolVersion: '2025-06-18',
            capabilities: {},
            clientInfo: { name: 'unsigned', version: '1.0.0' },
          },
        }),
      });
      const servedText = await unsignedInitialize.text();
      assert.equal(unsignedInitialize.status, 200, servedText);
      assert.equal(unsignedInitialize.headers.get('www-authenticate'), null);
    });

    test('A2A: tasks/send signed passes; the same body re-sent with its nonce is refused', async () => {
      await enforce(true);
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tasks/send',
        params: { capability: 'ic_get_my_membership', arguments: {} },
      });
      const headers = await signRequest(
        {
          method: 'POST',
          url: `${t.baseUrl}/api/a2a`,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body,
        },
        { key, created: now() },
      );
      const answer = await fetch(`${t.baseUrl}/api/a2a`, { method: 'POST', headers, body });
      const rpc = await answer.json();
      assert.equal(rpc.result?.tier, 'core', JSON.stringify(rpc));
      const replay = await (await fetch(`${t.baseUrl}/api/a2a`, { method: 'POST', headers, body })).json();
      assert.ok(JSON.stringify(replay).includes(`${REFUSED}nonce already used`), JSON.stringify(replay));
    });

    test('batch: the outer request is verified once for all its items', async () => {
      await enforce(true);
      const body = JSON.stringify({
        requests: [
          { method: 'GET', path: '/api/events/upcoming' },
          { method: 'GET', path: '/api/payments/donations' },
        ],
      });
      const answer = await send({ method: 'POST', path: '/api/batch', body });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.deepEqual(
        answer.body.results.map((r: { status: number }) => r.status),
        [200, 200],
      );
    });

    test('a public operation with a refused signature runs as anonymous and says why', async () => {
      await enforce(true);
      const check = await t.call('GET', '/api/agent/setup-check', { token });
      assert.equal(check.status, 200);
      assert.equal(check.body.ready, false);
      assert.ok(JSON.stringify(check.body).includes(REFUSED), JSON.stringify(check.body));
      const signed = await send({ method: 'GET', path: '/api/agent/setup-check' });
      assert.equal(signed.body.ready, true);
    });

    test('discovery: ai-agent.json and the protected-resource metadata describe the profile', async () => {
      for (const path of ['/.well-known/ai-agent.json', '/.well-known/oauth-protected-resource']) {
        const answer = await t.call('GET', path);
        assert.equal(answer.status, 200, path);
        const profile = answer.body.signed_requests;
        assert.equal(profile.supported, true, path);
        assert.deepEqual(profile.alg_values_supported, ['ed25519']);
        assert.equal(profile.label, 'sig1');
        assert.deepEqual(profile.covered_components.with_body, [
          '@method',
          '@authority',
          '@target-uri',
          'content-digest',
        ]);
        assert.deepEqual(profile.covered_components.without_body, ['@method', '@authority', '@target-uri']);
        assert.equal(profile.freshness_seconds, 60);
        assert.equal(profile.target_uri_base, t.baseUrl);
        assert.equal(profile.key_binding.register, `${t.baseUrl}/api/agent/keys/register`);
      }
    });

    test('a revoked key no longer signs', async () => {
      await enforce(true);
      const revoked = await t.call('POST', '/api/agent/keys/revoke', {
        headers: session,
        body: { token_id: tokenId },
      });
      assert.equal(revoked.body.revoked, true);
      const answer = await send(getActivity);
      assert.equal(answer.status, 401);
      assert.ok(
        answer.body.error.startsWith(`${REFUSED}no signing key is bound to this token`),
        answer.body.error,
      );
      const unsigned = await t.call('GET', '/api/activity/me', { token });
      assert.equal(unsigned.status, 401, 'enforced with no key: nothing passes');
      const rebound = await t.call('POST', '/api/agent/keys/register', {
        headers: session,
        body: { token_id: tokenId, jwk: key.jwk },
      });
      assert.equal(rebound.status, 200);
    });
  });
}
