import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createSession, SESSION_COOKIE } from '../src/domain/auth/sessions.ts';
import { appendEvent, readEvents } from '../src/domain/eventlog/eventlog.ts';
import type { Member } from '../src/domain/members/members.ts';
import { OPERATIONS } from '../src/operations/registry.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';

const NEW_TOOLS = ['ic_events_next', 'ic_get_my_membership', 'ic_request_tier'];

for (const engine of engines) {
  describe(`bearer tools without a REST path (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    const clients: Client[] = [];
    before(async () => {
      t = await startTestApp({ engine: engine.name });
    });
    after(async () => {
      await Promise.all(clients.map((c) => c.close()));
      await t?.close();
    });

    async function connect(token?: string): Promise<Client> {
      const client = new Client({ name: 'agent-commons-tests', version: '1.0.0' });
      const transport = new StreamableHTTPClientTransport(new URL(`${t.baseUrl}/api/mcp`), {
        requestInit: token ? { headers: { Authorization: `Bearer ${token}` } } : undefined,
      });
      await client.connect(transport);
      clients.push(client);
      return client;
    }
    async function mcp(token: string, name: string, args: Record<string, unknown> = {}) {
      const result = await (await connect(token)).callTool({ name, arguments: args });
      return { isError: result.isError, body: result.structuredContent as Record<string, any> };
    }
    const a2a = (capability: string, args: unknown, token?: string) =>
      t.call('POST', '/api/a2a', {
        body: { jsonrpc: '2.0', id: 1, method: 'tasks/send', params: { capability, arguments: args } },
        token,
      });
    async function session(member: Member) {
      return { cookie: `${SESSION_COOKIE}=${await createSession(t.deps.db, t.clock, member.id)}` };
    }
    const tierRows = (memberId: string) =>
      t.deps.db.selectFrom('tier_requests').selectAll().where('member_id', '=', memberId).execute();

    test('ic_events_next returns what the REST session read returns for the same member', async () => {
      const member = await t.member('member', 'Eve');
      const token = await t.token(member, ['membership:read']);
      const types = ['tier_approved', 'highlight_approved', 'tier_denied'] as const;
      for (let i = 0; i < 7; i += 1) {
        await appendEvent(
          t.deps.db,
          member.id,
          { type: types[i % 3], actor: { kind: 'system' }, target: { n: i }, payload: { i } },
          t.clock.now(),
        );
      }
      const cookie = await session(member);
      const cases = [
        { query: '', args: {} },
        { query: '?since=1&limit=2', args: { since: 1, limit: 2 } },
        {
          query: '?types=tier_approved,tier_denied,not_a_type&limit=3',
          args: { types: ['tier_approved', 'tier_denied', 'not_a_type'], limit: 3 },
        },
        { query: '?since=100', args: { since: 100 } },
      ];
      for (const { query, args } of cases) {
        const rest = await t.call('GET', `/api/events/next${query}`, { headers: cookie });
        assert.equal(rest.status, 200, rest.text);
        const viaMcp = await mcp(token, 'ic_events_next', args);
        assert.equal(viaMcp.isError, undefined, JSON.stringify(viaMcp.body));
        assert.deepEqual(viaMcp.body, rest.body, `MCP ${query}`);
        const viaA2a = await a2a('ic_events_next', args, token);
        assert.deepEqual(viaA2a.body.result, rest.body, `A2A ${query}: ${viaA2a.text}`);
      }
      const filtered = await mcp(token, 'ic_events_next', {
        types: ['tier_approved', 'tier_denied'],
        limit: 3,
      });
      assert.deepEqual(
        filtered.body.events.map((e: { id: number; type: string }) => `${e.id}:${e.type}`),
        // Id 1 is the token_minted record of the token this test minted.
        ['2:tier_approved', '4:tier_denied', '5:tier_approved'],
      );
      assert.equal(filtered.body.cursor, 5);
      assert.equal(filtered.body.has_more, true);
      const stored = await readEvents(t.deps.db, member.id, { since: 0, limit: 500 });
      const all = await mcp(token, 'ic_events_next', { limit: 500 });
      assert.deepEqual(
        all.body.events.map((e: { id: number }) => e.id),
        stored.events.map((e) => e.id),
      );
      assert.equal(all.body.has_more, false);
      const bad = await mcp(token, 'ic_events_next', { limit: 501 });
      assert.equal(bad.isError, true);
      assert.equal(bad.body.error_kind, 'validation');
    });

    test('ic_get_my_membership is the body of GET /api/tier/me', async () => {
      const member = await t.member('member', 'Gus');
      const token = await t.token(member, ['membership:read']);
      const cookie = await session(member);
      const asked = await t.call('POST', '/api/tier/request', {
        headers: cookie,
        body: { tier: 'resident' },
      });
      assert.equal(asked.status, 200, asked.text);
      const rest = await t.call('GET', '/api/tier/me', { headers: cookie });
      assert.equal(rest.status, 200);
      assert.equal(rest.body.pending.id, asked.body.pending.id);
      const viaMcp = await mcp(token, 'ic_get_my_membership');
      assert.deepEqual(viaMcp.body, rest.body);
      const viaA2a = await a2a('ic_get_my_membership', {}, token);
      assert.deepEqual(viaA2a.body.result, rest.body);
      assert.deepEqual(
        { tier: viaMcp.body.tier, email: viaMcp.body.email, display_name: viaMcp.body.display_name },
        { tier: 'member', email: member.email, display_name: 'Gus' },
      );
    });

    test('ic_request_tier stores the pending request and tells operators (tier_requested)', async () => {
      const operator = await t.member('operator', 'Ops');
      const member = await t.member('member', 'Rita');
      const token = await t.token(member, ['membership:read', 'membership:write']);
      const before = await readEvents(t.deps.db, operator.id, { since: 0, limit: 500 });
      const viaMcp = await mcp(token, 'ic_request_tier', { tier: 'resident', note: 'book club' });
      assert.equal(viaMcp.isError, undefined, JSON.stringify(viaMcp.body));
      assert.equal(viaMcp.body.ok, true);
      const rows = await tierRows(member.id);
      assert.equal(rows.length, 1);
      assert.deepEqual(
        { id: rows[0].id, tier: rows[0].tier, note: rows[0].note, status: rows[0].status },
        { id: viaMcp.body.pending.id, tier: 'resident', note: 'book club', status: 'pending' },
      );
      const told = await readEvents(t.deps.db, operator.id, {
        since: before.cursor,
        types: ['tier_requested'],
        limit: 500,
      });
      const event = told.events.find((e) => e.target.request_id === rows[0].id);
      assert.ok(event, JSON.stringify(told));
      assert.deepEqual(event.payload, { from: 'member', to: 'resident', note: 'book club' });

      const viaA2a = await a2a('ic_request_tier', { tier: 'core' }, token);
      assert.equal(viaA2a.body.result.pending.tier, 'core', viaA2a.text);
      const after = await tierRows(member.id);
      assert.deepEqual(after.map((r) => `${r.tier}:${r.status}`).sort(), [
        'core:pending',
        'resident:superseded',
      ]);

      const refused = await mcp(token, 'ic_request_tier', { tier: 'operator' });
      assert.equal(refused.isError, true);
      assert.equal(refused.body.error, 'tier_not_requestable');
      assert.equal(refused.body.current_tier, 'member');
      assert.equal((await tierRows(member.id)).length, 2);
    });

    test('a sandbox token gets a receipt and no row', async () => {
      const member = await t.member('member', 'Sandy');
      const token = await t.token(member, ['membership:write'], { sandbox: true });
      const viaMcp = await mcp(token, 'ic_request_tier', { tier: 'resident' });
      assert.equal(viaMcp.isError, undefined);
      assert.equal(viaMcp.body.sandbox, true);
      assert.equal(viaMcp.body.simulated, true);
      assert.deepEqual(viaMcp.body.would_have, {
        action: 'agentRequestTier',
        scope: 'membership:write',
        args: { tier: 'resident' },
      });
      const viaA2a = await a2a('ic_request_tier', { tier: 'resident' }, token);
      assert.equal(viaA2a.body.result.simulated, true, viaA2a.text);
      assert.deepEqual(await tierRows(member.id), []);
    });

    test('without the scope the refusal is insufficient_scope, in-band on MCP and a JSON-RPC error on A2A', async () => {
      const member = await t.member('member', 'Nora');
      const token = await t.token(member, ['read:public']);
      for (const [name, args] of [
        ['ic_events_next', {}],
        ['ic_get_my_membership', {}],
        ['ic_request_tier', { tier: 'resident' }],
      ] as const) {
        const viaMcp = await mcp(token, name, args);
        assert.equal(viaMcp.isError, true, name);
        assert.equal(viaMcp.body.ok, false, name);
        assert.equal(viaMcp.body.error, 'insufficient_scope', name);
        assert.equal(viaMcp.body.error_kind, 'insufficient_scope', name);
        const viaA2a = await a2a(name, args, token);
        assert.equal(viaA2a.body.error.code, -31403, viaA2a.text);
        assert.equal(viaA2a.body.error.data.error, 'insufficient_scope');
      }
      assert.deepEqual(await tierRows(member.id), []);
      const anonymous = await a2a('ic_get_my_membership', {});
      assert.equal(anonymous.status, 401, anonymous.text);
      assert.equal(anonymous.body.error.code, -31401);
    });

    test('tools/list, agent/capabilities and ic_capabilities (on both surfaces) include the tools', async () => {
      const member = await t.member('member');
      const token = await t.token(member, ['membership:read']);
      const { tools } = await (await connect()).listTools();
      const listed = tools.map((tool) => tool.name);
      for (const name of [...NEW_TOOLS, 'ic_capabilities', 'ic_health'])
        assert.ok(listed.includes(name), name);
      const events = tools.find((tool) => tool.name === 'ic_events_next')!;
      assert.equal((events.inputSchema.properties as any).types.type, 'array');
      const capabilities = await t.call('POST', '/api/a2a', {
        body: { jsonrpc: '2.0', id: 1, method: 'agent/capabilities' },
      });
      const names = capabilities.body.result.capabilities.map((c: { name: string }) => c.name);
      assert.deepEqual([...names].sort(), [...listed].sort());
      const viaMcp = await mcp(token, 'ic_capabilities');
      const viaA2a = await a2a('ic_capabilities', {}, token);
      assert.deepEqual(viaA2a.body.result, viaMcp.body);
      const byName = Object.fromEntries(viaMcp.body.tools.map((tool: any) => [tool.name, tool]));
      assert.equal(byName.ic_get_my_membership.callable, true);
      assert.equal(byName.ic_events_next.callable, true);
      assert.equal(byName.ic_request_tier.refused, 'insufficient_scope');
      const health = await a2a('ic_health', {});
      assert.equal(health.body.result.ok, true);
    });

    test('/.well-known/mcp.json and /llms.txt describe the tools from the registry', async () => {
      const response = await fetch(`${t.baseUrl}/.well-known/mcp.json`);
      assert.equal(response.status, 200);
      const doc = (await response.json()) as Record<string, any>;
      // The MCP registry's namespace/name: 127.0.0.1 has no domain, so the namespace is `local`.
      assert.equal(doc.name, 'local/agent-commons');
      assert.equal(doc.title, 'agent-commons');
      assert.equal(doc.version, '2026-07-16');
      assert.equal(doc.remotes[0].url, `${t.baseUrl}/api/mcp`);
      assert.equal(doc.remotes[0].type, 'streamable-http');
      const published = doc._meta['io.modelcontextprotocol.registry/publisher-provided'];
      assert.equal(
        published.auth.protected_resource_metadata,
        `${t.baseUrl}/.well-known/oauth-protected-resource/api/mcp`,
      );
      const tools = OPERATIONS.filter((op) => op.mcpTool);
      assert.deepEqual(
        published.tools,
        tools.map((op) => op.mcpTool),
      );
      assert.ok(published.public_tools.includes('ic_health'));
      assert.ok(!published.public_tools.includes('ic_request_tier'));
      assert.ok(!published.public_tools.includes('ic_capabilities'));

      const llms = await fetch(`${t.baseUrl}/llms.txt`);
      assert.equal(llms.status, 200);
      assert.match(llms.headers.get('content-type') ?? '', /^text\/markdown/);
      const text = await llms.text();
      assert.match(text, /^# agent-commons\n/);
      for (const link of [
        '/openapi.json',
        '/docs',
        '/.well-known/ai-agent.json',
        '/.well-known/mcp.json',
        '/.well-known/agent-card.json',
        '/api/agent/feedback',
        '/api/agent/signup/start',
      ]) {
        assert.ok(text.includes(`${t.baseUrl}${link}`), link);
      }
      for (const op of tools) assert.ok(text.includes(`\`${op.mcpTool}\``), op.mcpTool);
    });
  });
}
