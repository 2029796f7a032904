import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MS, utcDayStart } from '../src/clock.ts';
import { OPERATIONS } from '../src/operations/registry.ts';
import { a2aClient } from './support/a2a.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';

let sequence = 0;
function story(tag: string, extra: Record<string, unknown> = {}) {
  sequence += 1;
  return {
    id: `2026-07-16-a2a-${tag}-${sequence}-${Math.random().toString(36).slice(2, 8)}`,
    member_name: 'Ada Example',
    event_title: 'Community meetup',
    dek: 'Ada gave a talk about tidy databases.',
    ...extra,
  };
}

for (const engine of engines) {
  describe(`A2A JSON-RPC (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine: engine.name });
    });
    after(() => t?.close());

    const { rpc, send } = a2aClient(() => t);
    const stored = (id: string) =>
      t.deps.db.selectFrom('highlights').selectAll().where('id', '=', id).executeTakeFirst();
    async function submitter(scopes = ['events:submit_recap'], sandbox = false) {
      const member = await t.member('core');
      return { member, token: await t.token(member, scopes, { sandbox }) };
    }
    const capabilityNames = OPERATIONS.flatMap((op) => (op.mcpTool ? [op.mcpTool] : []));

    test('the agent card is served at both well-known paths and describes the bearer and OAuth', async () => {
      const card = await t.call('GET', '/.well-known/agent-card.json');
      const alias = await t.call('GET', '/.well-known/agent.json');
      assert.equal(card.status, 200, card.text);
      assert.deepEqual(alias.body, card.body);
      assert.equal(card.body.url, `${t.baseUrl}/api/a2a`);
      assert.equal(card.body.version, '2026-07-16');
      assert.equal(typeof card.body.protocolVersion, 'string');
      assert.deepEqual(card.body.defaultInputModes, ['application/json', 'text/plain']);
      assert.deepEqual(card.body.defaultOutputModes, ['application/json', 'text/plain']);
      assert.deepEqual(
        card.body.skills.map((s: { id: string }) => s.id),
        capabilityNames,
      );
      const { agentBearer, agentOAuth } = card.body.securitySchemes;
      assert.equal(agentBearer.type, 'http');
      assert.equal(agentBearer.scheme, 'bearer');
      assert.match(agentBearer.bearerFormat, /^agt_/);
      assert.equal(agentBearer.httpAuthSecurityScheme.scheme, 'Bearer', 'the 1.0 shape beside the 0.3 one');
      // The OAuth scheme names the endpoints the authorization server really serves.
      const server = (await t.call('GET', '/.well-known/oauth-authorization-server')).body;
      assert.equal(agentOAuth.type, 'oauth2');
      assert.equal(agentOAuth.flows.authorizationCode.authorizationUrl, server.authorization_endpoint);
      assert.equal(agentOAuth.flows.authorizationCode.tokenUrl, server.token_endpoint);
      assert.deepEqual(Object.keys(agentOAuth.flows.authorizationCode.scopes), server.scopes_supported);
      assert.equal(agentOAuth.oauth2SecurityScheme.flows.authorizationCode.pkceRequired, true);
      // A token or nothing: public skills take no token; each bearer skill names its scope.
      assert.deepEqual(card.body.security, [{ agentBearer: [] }, { agentOAuth: [] }, {}]);
      const submit = card.body.skills.find((s: { id: string }) => s.id === 'ic_highlights_submit');
      assert.deepEqual(submit.security, [
        { agentBearer: ['events:submit_recap'] },
        { agentOAuth: ['events:submit_recap'] },
      ]);
      assert.deepEqual(submit.securityRequirements, [
        { schemes: { agentBearer: { list: ['events:submit_recap'] } } },
        { schemes: { agentOAuth: { list: ['events:submit_recap'] } } },
      ]);
      const health = card.body.skills.find((s: { id: string }) => s.id === 'ic_health');
      assert.equal(health.security, undefined);
    });

    test('agent/info and agent/capabilities are public and walk the registry', async () => {
      const info = await rpc('agent/info');
      assert.equal(info.status, 200, info.text);
      assert.equal(info.body.jsonrpc, '2.0');
      assert.equal(info.body.id, 1);
      assert.equal(info.body.result.name, 'agent-commons');
      assert.equal(info.body.result.version, '2026-07-16');
      assert.equal(info.body.result.surfaces.a2a, `${t.baseUrl}/api/a2a`);
      assert.equal(info.body.result.auth.scheme, 'bearer');

      const listed = await rpc('agent/capabilities', undefined, undefined, 'caps');
      assert.equal(listed.body.id, 'caps');
      const capabilities = listed.body.result.capabilities;
      assert.deepEqual(
        capabilities.map((c: { name: string }) => c.name),
        capabilityNames,
      );
      for (const op of OPERATIONS.filter((o) => o.mcpTool)) {
        const entry = capabilities.find((c: { name: string }) => c.name === op.mcpTool);
        assert.equal(entry.scope, op.scope ?? null, op.id);
        assert.equal(entry.credential, op.credential, op.id);
        assert.equal(entry.sandbox, op.sandbox, op.id);
        assert.deepEqual(entry.input_schema, JSON.parse(JSON.stringify(op.input)), op.id);
        assert.equal(entry.description, op.description ?? op.summary, op.id);
      }
    });

    test('tasks/send ic_highlights_submit answers REST’s body and stores the story', async () => {
      const { member, token } = await submitter();
      const sent = story('ok');
      const response = await send('ic_highlights_submit', sent, token);
      assert.equal(response.status, 200, response.text);
      assert.equal(response.body.error, undefined, response.text);
      const result = response.body.result;
      assert.equal(result.ok, true);
      assert.equal(result.id, sent.id);
      assert.equal(result.job_id, sent.id);
      assert.equal(result.status, 'pending');
      assert.equal(result.poll_url, `${t.baseUrl}/api/ingest/highlights/pending?id=${sent.id}`);
      assert.deepEqual(result.rate, { current: 1, remaining: 2, limit: 3 });
      assert.match(response.headers.get('ratelimit-policy') ?? '', /highlights/, 'REST’s rate headers');
      const row = await stored(sent.id);
      assert.ok(row, 'the story is stored');
      assert.equal(row.member_id, member.id);
      assert.equal(row.status, 'pending');
      assert.deepEqual(JSON.parse(row.story), sent);
    });

    test('refusals are JSON-RPC errors carrying the spec Error body', async () => {
      const anonymous = story('anon');
      const unauthorized = await send('ic_highlights_submit', anonymous);
      assert.equal(unauthorized.status, 401);
      assert.match(
        unauthorized.headers.get('www-authenticate') ?? '',
        /^Bearer resource_metadata=".*\/api\/a2a"$/,
      );
      assert.equal(unauthorized.body.error.code, -31401, unauthorized.text);
      assert.equal(unauthorized.body.error.data.error_kind, 'unauthorized');
      assert.equal(unauthorized.body.error.data.ok, false);
      assert.equal(await stored(anonymous.id), undefined);

      const { token: unscoped } = await submitter(['read:public']);
      const scopeless = story('scope');
      const forbidden = await send('ic_highlights_submit', scopeless, unscoped);
      assert.equal(forbidden.status, 200);
      assert.equal(forbidden.body.error.code, -31403, forbidden.text);
      assert.equal(forbidden.body.error.data.error, 'insufficient_scope');
      assert.equal(forbidden.body.error.data.tier, 'core');
      assert.equal(await stored(scopeless.id), undefined);

      const { token } = await submitter();
      const invalid = await send('ic_highlights_submit', { ...story('bad'), images: ['data:,x'] }, token);
      assert.equal(invalid.body.error.code, -32602, invalid.text);
      assert.equal(invalid.body.error.data.error_kind, 'validation');
      assert.equal(invalid.body.error.data.field, 'images.0');

      const unknown = await send('ic_no_such_tool', {}, token);
      assert.equal(unknown.body.error.code, -32602, unknown.text);
      assert.equal(unknown.body.error.data.error, 'unknown_capability');
      const missing = await rpc('tasks/send', { arguments: {} }, token);
      assert.equal(missing.body.error.code, -32602, missing.text);
    });

    test('a sandbox token gets the receipt and nothing is stored', async () => {
      const { member, token } = await submitter(['events:submit_recap'], true);
      const sent = story('sandbox');
      const response = await send('ic_highlights_submit', sent, token);
      assert.equal(response.body.result?.sandbox, true, response.text);
      assert.equal(response.body.result.simulated, true);
      assert.deepEqual(response.body.result.would_have, {
        action: 'submitHighlight',
        scope: 'events:submit_recap',
        args: sent,
      });
      assert.equal(await stored(sent.id), undefined);
      const rows = await t.deps.db.selectFrom('highlights').select('id').where('member_id', '=', member.id);
      assert.equal((await rows.execute()).length, 0);
    });

    test('over the daily quota: -31429 with retry_after_seconds', async () => {
      const { token } = await submitter();
      for (let i = 0; i < 3; i++) {
        const ok = await send('ic_highlights_submit', story('quota'), token);
        assert.equal(ok.body.result?.ok, true, ok.text);
      }
      const refused = story('quota-refused');
      const over = await send('ic_highlights_submit', refused, token);
      assert.equal(over.body.error.code, -31429, over.text);
      assert.equal(over.body.error.data.error_kind, 'rate_limit');
      const wait = Math.ceil((utcDayStart(t.clock.now()) + MS.day - t.clock.now()) / 1000);
      assert.equal(over.body.error.data.retry_after_seconds, wait);
      assert.equal(await stored(refused.id), undefined);
    });

    test('idempotency_key is REST’s Idempotency-Key: a reused key with other arguments is refused', async () => {
      const { token } = await submitter();
      const key = `a2a-key-${Math.random().toString(36).slice(2)}`;
      const first = story('idem');
      const sent = await send('ic_highlights_submit', first, token, { idempotency_key: key });
      assert.equal(sent.body.result?.ok, true, sent.text);
      const replay = await send('ic_highlights_submit', first, token, { idempotency_key: key });
      assert.deepEqual(replay.body.result, sent.body.result, 'the replay answers the stored body');
      const other = story('idem-other');
      const reused = await send('ic_highlights_submit', other, token, { idempotency_key: key });
      assert.equal(reused.body.error.code, -31422, reused.text);
      assert.equal(reused.body.error.data.error_kind, 'idempotency_conflict');
      assert.equal(await stored(other.id), undefined);
    });
  });
}
