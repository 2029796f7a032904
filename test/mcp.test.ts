import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { setMemberTier } from '../src/domain/members/members.ts';
import { OPERATIONS } from '../src/operations/registry.ts';
import { sha256 } from '../src/secrets.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';

const HIGHLIGHTS = '/api/ingest/highlights/pending';

let sequence = 0;
function story(tag: string) {
  sequence += 1;
  return {
    id: `2026-07-16-${tag}-${sequence}-${Math.random().toString(36).slice(2, 8)}`,
    member_name: 'Ada Example',
    event_title: 'Community meetup',
    dek: 'Ada gave a talk about tidy databases.',
  };
}

/** The official SDK client over Streamable HTTP, with the token as a static bearer header. */
async function mcpClient(t: TestApp, token?: string): Promise<Client> {
  const client = new Client({ name: 'agent-commons-tests', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${t.baseUrl}/api/mcp`), {
    requestInit: token ? { headers: { Authorization: `Bearer ${token}` } } : undefined,
  });
  await client.connect(transport);
  return client;
}

/** One raw JSON-RPC POST, for assertions on the HTTP exchange itself. */
async function mcpPost(
  t: TestApp,
  message: unknown,
  options: { token?: string; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = {
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
    'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
    ...options.headers,
  };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const response = await fetch(`${t.baseUrl}/api/mcp`, {
    method: 'POST',
    headers,
    body: JSON.stringify(message),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

const toolCall = (name: string, args: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name, arguments: args },
});

/** A wire body without what differs on every call. */
function stable(body: Record<string, unknown>, volatile: string[] = []) {
  const copy: Record<string, unknown> = { ...body };
  for (const key of ['request_id', ...volatile]) delete copy[key];
  return copy;
}

for (const engine of engines) {
  describe(`MCP surface (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    const clients: Client[] = [];
    before(async () => {
      t = await startTestApp({ engine: engine.name, limits: { feedbackPerHour: 100 } });
    });
    after(async () => {
      await Promise.all(clients.map((c) => c.close()));
      await t?.close();
    });
    async function connect(token?: string) {
      const client = await mcpClient(t, token);
      clients.push(client);
      return client;
    }
    async function tokenWith(scopes: string[], options: { sandbox?: boolean; tier?: string } = {}) {
      const member = await t.member(options.tier ?? 'core');
      return { member, token: await t.token(member, scopes, { sandbox: options.sandbox }) };
    }
    const storedHighlight = (id: string) =>
      t.deps.db.selectFrom('highlights').selectAll().where('id', '=', id).executeTakeFirst();

    test('initialize names the server and offers tools', async () => {
      const client = await connect();
      assert.equal(client.getServerVersion()?.name, 'agent-commons');
      assert.ok(client.getServerCapabilities()?.tools, 'tools capability');
    });

    test('tools/list lists exactly the registry tools, each with its operation’s input schema', async () => {
      const { tools } = await (await connect()).listTools();
      const registryTools = OPERATIONS.filter((op) => op.mcpTool);
      // ic_capabilities and ic_health are registry operations too (no REST path): no tool is added by the surface.
      const expected = registryTools.map((op) => op.mcpTool!);
      assert.ok(expected.includes('ic_capabilities') && expected.includes('ic_health'));
      assert.deepEqual(tools.map((tool) => tool.name).sort(), expected.sort());
      for (const op of registryTools) {
        const tool = tools.find((candidate) => candidate.name === op.mcpTool)!;
        // Every MCP caller is an agent: what only a browser session may leave out is required here.
        const input = JSON.parse(JSON.stringify(op.input));
        if (op.agentRequired) input.required = [...new Set([...(input.required ?? []), ...op.agentRequired])];
        assert.deepEqual(tool.inputSchema, input, op.mcpTool);
        assert.ok(tool.description?.startsWith(op.summary), op.mcpTool);
      }
    });

    test('ic_highlights_submit with the scope queues the story like REST does', async () => {
      const { member, token } = await tokenWith(['events:submit_recap']);
      const sent = story('mcp');
      const result = await (await connect(token)).callTool({ name: 'ic_highlights_submit', arguments: sent });
      assert.equal(result.isError, undefined);
      const body = result.structuredContent as Record<string, any>;
      assert.deepEqual(JSON.parse((result.content as { text: string }[])[0].text), body);
      const viaRest = await t.call('POST', HIGHLIGHTS, { token, body: story('rest') });
      assert.equal(viaRest.status, 202);
      assert.deepEqual(Object.keys(body).sort(), Object.keys(viaRest.body).sort());
      assert.equal(body.id, sent.id);
      assert.equal(body.status, 'pending');
      assert.deepEqual(body.rate, { current: 1, remaining: 2, limit: 3 });
      assert.equal(body.poll_url, `${t.baseUrl}${HIGHLIGHTS}?id=${sent.id}`);
      const row = await storedHighlight(sent.id);
      assert.equal(row?.member_id, member.id);
      assert.deepEqual(JSON.parse(row!.story), sent);
    });

    test('without the scope the refusal is in-band; from 2025-11-25 it also carries a scope challenge when the tier could grant it', async () => {
      const { token } = await tokenWith(['read:public']);
      const expected = {
        ok: false,
        error: 'insufficient_scope',
        error_kind: 'insufficient_scope',
        tier: 'core',
        required_scope: 'events:submit_recap',
      };
      const older = story('noscope-0618');
      const inBand = await mcpPost(t, toolCall('ic_highlights_submit', older), {
        token,
        headers: { 'mcp-protocol-version': '2025-06-18' },
      });
      assert.equal(inBand.status, 200);
      assert.equal(inBand.headers.get('www-authenticate'), null);
      assert.equal(inBand.body.result.isError, true);
      assert.deepEqual(stable(inBand.body.result.structuredContent, ['message']), expected);
      const newer = story('noscope-1125');
      const challenged = await mcpPost(t, toolCall('ic_highlights_submit', newer), { token });
      assert.equal(challenged.status, 200);
      assert.equal(challenged.body.result.isError, true);
      assert.match(
        challenged.headers.get('www-authenticate') ?? '',
        new RegExp(
          `^Bearer error="insufficient_scope", resource_metadata="${t.baseUrl}/.well-known/oauth-protected-resource/api/mcp", error_description="[^"]+", scope="read:public events:submit_recap"$`,
        ),
      );
      assert.deepEqual(
        stable(challenged.body.result.structuredContent, ['message']),
        expected,
        'the body is the same',
      );
      // The SDK client reads it as a tool result.
      const viaSdk = await (await connect(token)).callTool({
        name: 'ic_highlights_submit',
        arguments: story('sdk'),
      });
      assert.equal(viaSdk.isError, true);
      assert.equal((viaSdk.structuredContent as { error: string }).error, 'insufficient_scope');
      for (const id of [older.id, newer.id]) assert.equal(await storedHighlight(id), undefined);
      // A scope above the member's tier stays in-band: no consent could grant it.
      const member = await tokenWith(['read:public'], { tier: 'member' });
      const aboveTier = await mcpPost(t, toolCall('ic_highlights_submit', story('tier')), {
        token: member.token,
      });
      assert.equal(aboveTier.status, 200);
      assert.equal(aboveTier.headers.get('www-authenticate'), null);
      assert.equal(aboveTier.body.result.isError, true);
    });

    test('a revoked or missing bearer is an HTTP 401 with the resource-metadata challenge', async () => {
      const { token } = await tokenWith(['events:submit_recap']);
      await t.call('POST', '/api/agent/token/revoke', { token, body: {} });
      const metadata = `${t.baseUrl}/.well-known/oauth-protected-resource/api/mcp`;
      // A missing token: the tool answers in-band, and the HTTP status says how to get one.
      const unsent = story('missing');
      const missing = await mcpPost(t, toolCall('ic_highlights_submit', unsent));
      assert.equal(missing.status, 401);
      assert.equal(missing.headers.get('www-authenticate'), `Bearer resource_metadata="${metadata}"`);
      assert.equal(missing.body.result.isError, true);
      assert.equal(missing.body.result.structuredContent.error, 'missing_token');
      assert.equal(missing.body.result.structuredContent.error_kind, 'unauthorized');
      assert.equal(await storedHighlight(unsent.id), undefined);
      // A revoked token: the member tool is refused in-band, and the HTTP 401 names invalid_token.
      const sent = story('revoked');
      const revoked = await mcpPost(t, toolCall('ic_highlights_submit', sent), { token });
      assert.equal(revoked.status, 401);
      assert.equal(
        revoked.headers.get('www-authenticate'),
        `Bearer error="invalid_token", resource_metadata="${metadata}", error_description="The bearer token has been revoked."`,
      );
      assert.equal(revoked.body.result.isError, true);
      assert.equal(revoked.body.result.structuredContent.error, 'token_revoked');
      assert.equal(await storedHighlight(sent.id), undefined);
      // The SDK client still connects (initialize is public: a bad token there is read as none),
      // and learns it at its first member tool.
      const client = await connect(token);
      await assert.rejects(
        client.callTool({ name: 'ic_highlights_submit', arguments: story('revoked-sdk') }),
        /401|invalid_token|revoked/i,
      );
    });

    test('initialize, tools/list and public tools need no token', async () => {
      const listed = await mcpPost(t, { jsonrpc: '2.0', id: 7, method: 'tools/list' });
      assert.equal(listed.status, 200);
      assert.ok(listed.body.result.tools.length > 0);
      const health = await (await connect()).callTool({ name: 'ic_health', arguments: {} });
      assert.deepEqual(health.structuredContent, { ok: true, version: '2026-07-16' });
    });

    test('a sandbox token gets the receipt and nothing is stored', async () => {
      const { token } = await tokenWith(['events:submit_recap'], { sandbox: true });
      const sent = story('sandbox');
      const result = await (await connect(token)).callTool({ name: 'ic_highlights_submit', arguments: sent });
      const body = result.structuredContent as Record<string, any>;
      assert.equal(body.sandbox, true);
      assert.equal(body.simulated, true);
      assert.equal(body.would_have.action, 'submitHighlight');
      assert.equal(await storedHighlight(sent.id), undefined);
    });

    test('over the daily quota the refusal is an in-band rate_limit error', async () => {
      const { token } = await tokenWith(['events:submit_recap']);
      const client = await connect(token);
      for (let i = 0; i < 3; i += 1) {
        const ok = await client.callTool({ name: 'ic_highlights_submit', arguments: story('quota') });
        assert.equal(ok.isError, undefined, JSON.stringify(ok.structuredContent));
      }
      const sent = story('quota');
      const refused = await client.callTool({ name: 'ic_highlights_submit', arguments: sent });
      assert.equal(refused.isError, true);
      const body = refused.structuredContent as Record<string, any>;
      assert.equal(body.ok, false);
      assert.equal(body.error_kind, 'rate_limit');
      assert.equal(body.limit, 3);
      assert.equal(await storedHighlight(sent.id), undefined);
    });

    test('ic_feedback_submit works without a token and files an anonymous ticket', async () => {
      const result = await (await connect()).callTool({
        name: 'ic_feedback_submit',
        arguments: { message: 'The MCP docs miss an example.', kind: 'stale_doc' },
      });
      const body = result.structuredContent as Record<string, any>;
      assert.equal(body.ok, true);
      assert.equal(body.authenticated, false);
      const row = await t.deps.db
        .selectFrom('feedback')
        .selectAll()
        .where('ticket_id', '=', body.ticket_id)
        .executeTakeFirst();
      assert.equal(row?.message, 'The MCP docs miss an example.');
      assert.equal(row?.member_id, null);
    });

    test('ic_token_revoke revokes the calling token', async () => {
      const { token } = await tokenWith(['read:public']);
      const result = await (await connect(token)).callTool({ name: 'ic_token_revoke', arguments: {} });
      const body = result.structuredContent as Record<string, any>;
      assert.equal(body.revoked, true);
      assert.equal(body.already_revoked, false);
      const row = await t.deps.db
        .selectFrom('tokens')
        .select('revoked_at')
        .where('hash', '=', sha256(token))
        .executeTakeFirstOrThrow();
      assert.equal(Number(row.revoked_at), t.clock.now());
    });

    test('ic_capabilities lists every tool and what this token can call', async () => {
      const { member, token } = await tokenWith(['read:public', 'feedback:submit', 'events:submit_recap']);
      await setMemberTier(t.deps.db, t.clock, t.deps.tiers, member.id, 'member');
      const client = await connect(token);
      const listed = (await client.listTools()).tools.map((tool) => tool.name);
      const result = await client.callTool({ name: 'ic_capabilities', arguments: {} });
      const body = result.structuredContent as Record<string, any>;
      assert.equal(body.token.tier, 'member');
      assert.deepEqual(body.token.scopes, ['read:public', 'feedback:submit', 'events:submit_recap']);
      assert.deepEqual(body.tools.map((tool: any) => tool.name).sort(), [...listed].sort());
      const byName = Object.fromEntries(body.tools.map((tool: any) => [tool.name, tool]));
      // The scope is on the token but the member's tier no longer grants it: what the pipeline says.
      assert.equal(byName.ic_highlights_submit.callable, false);
      assert.equal(byName.ic_highlights_submit.refused, 'tier');
      const refusal = await client.callTool({ name: 'ic_highlights_submit', arguments: story('tier') });
      assert.equal((refusal.structuredContent as any).error_kind, 'tier');
      for (const name of ['ic_capabilities', 'ic_health', 'ic_feedback_submit', 'ic_highlights_status']) {
        assert.equal(byName[name].callable, true, name);
      }
      assert.deepEqual(
        body.callable,
        body.tools.filter((tool: any) => tool.callable).map((tool: any) => tool.name),
      );
      const { token: narrow } = await tokenWith(['read:public']);
      const narrowResult = await (await connect(narrow)).callTool({ name: 'ic_capabilities', arguments: {} });
      const narrowTools = (narrowResult.structuredContent as any).tools;
      assert.equal(
        narrowTools.find((tool: any) => tool.name === 'ic_highlights_submit').refused,
        'insufficient_scope',
      );
      const anonymous = await mcpPost(t, toolCall('ic_capabilities'));
      assert.equal(anonymous.status, 401);
    });

    test('transport rules: Accept, Origin, protocol version, GET', async () => {
      const list = { jsonrpc: '2.0', id: 3, method: 'tools/list' };
      const noAccept = await mcpPost(t, list, { headers: { accept: 'application/json' } });
      assert.equal(noAccept.status, 406);
      assert.equal(noAccept.body.error.code, -32000);
      assert.match(noAccept.body.error.message, /Not Acceptable/);
      const foreign = await mcpPost(t, list, { headers: { origin: 'https://evil.example' } });
      assert.equal(foreign.status, 403);
      assert.equal(foreign.body.error.code, -32000);
      const own = await mcpPost(t, list, { headers: { origin: new URL(t.baseUrl).origin } });
      assert.equal(own.status, 200);
      const oldVersion = await mcpPost(t, list, { headers: { 'mcp-protocol-version': '1999-01-01' } });
      assert.equal(oldVersion.status, 400);
      assert.match(oldVersion.body.error.message, /Unsupported protocol version/);
      const get = await fetch(`${t.baseUrl}/api/mcp`, { headers: { accept: 'text/event-stream' } });
      assert.equal(get.status, 405);
      const badJson = await fetch(`${t.baseUrl}/api/mcp`, {
        method: 'POST',
        headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
        body: '{"jsonrpc":',
      });
      assert.equal(badJson.status, 400);
      assert.equal((await badJson.json()).error.code, -32700);
    });
  });
}

describe('MCP exchanges on reused servers', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ limits: { tokenPerMinute: 10_000 } });
  });
  after(() => t?.close());

  test('concurrent calls carrying the same JSON-RPC id each get their own caller’s answer', async () => {
    const callers = await Promise.all(
      ['Ada', 'Grace', 'Hedy', 'Katherine'].map(async (name) => {
        const member = await t.member('member', name);
        return { member, token: await t.token(member, ['membership:read']) };
      }),
    );
    const calls = Array.from({ length: 80 }, (_, i) => callers[i % callers.length]);
    const answers = await Promise.all(
      calls.map(({ token }) => mcpPost(t, toolCall('ic_get_my_membership'), { token })),
    );
    for (const [i, answer] of answers.entries()) {
      assert.equal(answer.status, 200);
      assert.equal(answer.body.id, 1);
      assert.equal(answer.body.result.structuredContent.email, calls[i].member.email);
    }
  });

  test('a batch is answered in order; repeated ids are refused; notifications alone get 202', async () => {
    const member = await t.member('member');
    const token = await t.token(member, ['membership:read']);
    const batch = await mcpPost(
      t,
      [
        { ...toolCall('ic_health'), id: 'b' },
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { ...toolCall('ic_get_my_membership'), id: 'a' },
      ],
      { token },
    );
    assert.equal(batch.status, 200);
    assert.deepEqual(
      batch.body.map((answer: { id: string }) => answer.id),
      ['b', 'a'],
    );
    assert.equal(batch.body[1].result.structuredContent.email, member.email);
    const repeated = await mcpPost(t, [toolCall('ic_health'), toolCall('ic_health')], { token });
    assert.equal(repeated.status, 400);
    assert.equal(repeated.body.error.code, -32600);
    const notification = await mcpPost(t, { jsonrpc: '2.0', method: 'notifications/initialized' });
    assert.equal(notification.status, 202);
    assert.equal(notification.body, undefined);
  });
});

for (const engine of engines) {
  describe(`MCP exchanges without a tool call are charged per IP (${engine.name})`, {
    skip: engine.skip,
  }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine: engine.name, limits: { anonymousPerMinute: 3 } });
    });
    after(() => t?.close());

    test('tools/list past the anonymous limit is a 429 with Retry-After; tool calls are charged to their token', async () => {
      const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
      const remaining: (string | null)[] = [];
      for (let i = 0; i < 3; i += 1) {
        const listed = await mcpPost(t, list);
        assert.equal(listed.status, 200);
        assert.ok(listed.body.result.tools.length > 0);
        assert.match(listed.headers.get('ratelimit-policy') ?? '', /"anonymous";q=3;w=60/);
        remaining.push(listed.headers.get('ratelimit-remaining'));
      }
      assert.deepEqual(remaining, ['2', '1', '0']);
      const refused = await mcpPost(t, list);
      assert.equal(refused.status, 429);
      assert.ok(Number(refused.headers.get('retry-after')) > 0);
      assert.equal(refused.body.jsonrpc, '2.0');
      assert.equal(refused.body.error.code, -32000);
      assert.match(refused.body.error.message, /anonymous/);
      assert.equal(refused.body.result, undefined);

      // A token's tool call is charged to the token, not to the spent per-IP budget.
      const member = await t.member('member');
      const token = await t.token(member, ['membership:read']);
      const call = await mcpPost(t, toolCall('ic_get_my_membership'), { token });
      assert.equal(call.status, 200);
      assert.equal(call.body.result.isError, undefined, JSON.stringify(call.body.result));
      assert.match(call.headers.get('ratelimit-policy') ?? '', /"token"/);
    });
  });
}
