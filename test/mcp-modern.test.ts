import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { LISTEN_CAPABILITIES } from '../src/surfaces/mcp-listen.ts';
import { startTestApp, type TestApp } from './support/app.ts';

// MCP at revision 2026-07-28 at the same URL as 2025-11-25 (src/surfaces/mcp-modern.ts): the wire as
// the revision writes it, the SDK v2 client and the Inspector's CLI. The wire does not depend on the
// storage, so one SQLite app serves the file.

const MODERN = '2026-07-28';
const INSPECTOR = join(
  import.meta.dirname,
  '../node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js',
);

const envelope = (meta: Record<string, unknown> = {}) => ({
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'agent-commons-tests', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
  ...meta,
});

interface Post {
  method: string;
  params?: Record<string, unknown>;
  headers?: Record<string, string | undefined>;
  token?: string;
  id?: number | string;
}

describe('MCP 2026-07-28 beside 2025-11-25', () => {
  let t: TestApp;
  const clients: Client[] = [];
  before(async () => {
    t = await startTestApp({ engine: 'sqlite' });
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await t?.close();
  });

  /** A modern POST with every header the revision asks for, unless `headers` overrides one (undefined drops it). */
  async function post({ method, params = { _meta: envelope() }, headers = {}, token, id = 1 }: Post) {
    const name = typeof params.name === 'string' ? params.name : undefined;
    const all: Record<string, string | undefined> = {
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      'mcp-protocol-version': MODERN,
      'mcp-method': method,
      ...(name !== undefined && { 'mcp-name': name }),
      ...(token && { authorization: `Bearer ${token}` }),
      ...headers,
    };
    const sent = Object.fromEntries(Object.entries(all).filter(([, v]) => v !== undefined)) as Record<
      string,
      string
    >;
    const response = await fetch(`${t.baseUrl}/api/mcp`, {
      method: 'POST',
      headers: sent,
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
  }

  async function connect(options: { token?: string; auto?: boolean } = {}) {
    const client = new Client(
      { name: 'agent-commons-tests', version: '1.0.0' },
      options.auto === false ? {} : { versionNegotiation: { mode: 'auto' } },
    );
    const headers = options.token ? { Authorization: `Bearer ${options.token}` } : undefined;
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${t.baseUrl}/api/mcp`), { requestInit: { headers } }),
    );
    clients.push(client);
    return client;
  }

  test('server/discover: versions, capabilities, identity, instructions and caching hints', async () => {
    const { status, headers, body } = await post({ method: 'server/discover' });
    assert.equal(status, 200);
    assert.equal(headers.get('mcp-session-id'), null);
    assert.equal(body.id, 1);
    const { result } = body;
    assert.equal(result.resultType, 'complete');
    assert.deepEqual(result.supportedVersions, [MODERN]);
    // Tools, and the event log's subscription (subscriptions/listen, test/mcp-listen.test.ts).
    assert.deepEqual(result.capabilities, { tools: {}, ...LISTEN_CAPABILITIES });
    assert.equal(typeof result.instructions, 'string');
    assert.equal(result._meta['io.modelcontextprotocol/serverInfo'].name, 'agent-commons');
    assert.ok(Number.isInteger(result.ttlMs) && result.ttlMs >= 0);
    assert.equal(result.cacheScope, 'public');
  });

  test('tools/list: the registry tools, public, with caching hints, the same with or without a token', async () => {
    const anonymous = await post({ method: 'tools/list' });
    assert.equal(anonymous.status, 200);
    const { result } = anonymous.body;
    assert.equal(result.resultType, 'complete');
    assert.equal(result.cacheScope, 'public');
    assert.ok(result.ttlMs > 0);
    const legacy = await (await connect({ auto: false })).listTools();
    assert.deepEqual(
      result.tools.map((tool: { name: string }) => tool.name),
      legacy.tools.map((tool) => tool.name),
    );
    const token = await t.token(await t.member('core'), ['membership:read']);
    const withToken = await post({ method: 'tools/list', token });
    assert.deepEqual(withToken.body.result.tools, result.tools);
  });

  test('the envelope in _meta is required: Invalid params (400, -32602) with the id', async () => {
    const cases: Record<string, unknown>[] = [
      {},
      { _meta: {} },
      { _meta: { 'io.modelcontextprotocol/clientCapabilities': {} } },
      { _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN } },
      { _meta: envelope({ 'io.modelcontextprotocol/clientInfo': 'me' }) },
    ];
    for (const params of cases) {
      const { status, body } = await post({ method: 'tools/list', params, id: 7 });
      assert.equal(status, 400, JSON.stringify(params));
      assert.equal(body.error.code, -32602, JSON.stringify(params));
      assert.equal(body.id, 7);
    }
    const noClientInfo = await post({ method: 'tools/list', params: { _meta: envelope({}) } });
    assert.equal(noClientInfo.status, 200);
  });

  test('headers against the body: 400 with HeaderMismatch (-32020)', async () => {
    const call = { name: 'ic_health', arguments: {}, _meta: envelope() };
    const cases: Post[] = [
      { method: 'tools/list', headers: { 'mcp-protocol-version': undefined } },
      {
        method: 'tools/list',
        params: { _meta: envelope({ 'io.modelcontextprotocol/protocolVersion': 'v9' }) },
      },
      { method: 'tools/list', headers: { 'mcp-method': undefined } },
      { method: 'tools/list', headers: { 'mcp-method': 'tools/call' } },
      { method: 'tools/call', params: call, headers: { 'mcp-name': undefined } },
      { method: 'tools/call', params: call, headers: { 'mcp-name': 'ic_events_get' } },
      { method: 'tools/call', params: call, headers: { 'mcp-name': '=?base64?not base64?=' } },
    ];
    for (const [i, request] of cases.entries()) {
      const { status, body } = await post({ ...request, id: `case-${i}` });
      assert.equal(status, 400, `case ${i}`);
      assert.equal(body.error.code, -32020, `case ${i}: ${JSON.stringify(body)}`);
      assert.equal(body.id, `case-${i}`);
    }
    // Optional whitespace around a value is not part of it; a Base64 sentinel is decoded first.
    const encoded = `=?base64?${Buffer.from('ic_health').toString('base64')}?=`;
    for (const name of ['  ic_health ', encoded]) {
      const { status, body } = await post({
        method: 'tools/call',
        params: call,
        headers: { 'mcp-name': name },
      });
      assert.equal(status, 200, name);
      assert.deepEqual(body.result.structuredContent, { ok: true, version: '2026-07-16' });
      assert.equal(body.result.resultType, 'complete');
    }
  });

  test('an unsupported version: 400 with -32022, the supported list and the requested version', async () => {
    const requested = '2099-01-01';
    const { status, body } = await post({
      method: 'server/discover',
      params: { _meta: envelope({ 'io.modelcontextprotocol/protocolVersion': requested }) },
      headers: { 'mcp-protocol-version': requested },
    });
    assert.equal(status, 400);
    assert.equal(body.error.code, -32022);
    assert.deepEqual(body.error.data, { supported: [MODERN], requested });
  });

  test('no session, no handshake: initialize, ping, logging/setLevel and the rest are 404 Method not found', async () => {
    for (const method of ['initialize', 'ping', 'logging/setLevel', 'resources/read', 'prompts/list']) {
      const { status, body } = await post({
        method,
        params: { _meta: envelope(), uri: 'x:y', name: 'x' },
        headers: { 'mcp-name': method === 'resources/read' ? 'x:y' : 'x' },
      });
      assert.equal(status, 404, method);
      assert.equal(body.error.code, -32601, method);
    }
    for (const method of ['GET', 'DELETE']) {
      const response = await fetch(`${t.baseUrl}/api/mcp`, {
        method,
        headers: { 'mcp-protocol-version': MODERN },
      });
      assert.equal(response.status, 405, method);
    }
    // A session id from a 2025-era habit is ignored, never echoed.
    const withSession = await post({ method: 'tools/list', headers: { 'mcp-session-id': 'abc' } });
    assert.equal(withSession.status, 200);
    assert.equal(withSession.headers.get('mcp-session-id'), null);
  });

  test('no resources capability: a resources/read of any URI is Method not found on both eras, never an empty contents', async () => {
    const uri = 'test://nonexistent-resource';
    const modern = await post({
      method: 'resources/read',
      params: { _meta: envelope(), uri },
      headers: { 'mcp-name': uri },
      id: 5,
    });
    assert.equal(modern.status, 404);
    assert.deepEqual(modern.body, {
      jsonrpc: '2.0',
      id: 5,
      error: {
        code: -32601,
        message: 'Method not found: resources/read',
        data: { reason: 'The server does not offer the resources capability' },
      },
    });
    const discovered = await post({ method: 'server/discover' });
    assert.equal(discovered.body.result.capabilities.resources, undefined);
    // The 2025 era (the SDK's server, which registers no resource handlers) says the same.
    const legacy = await fetch(`${t.baseUrl}/api/mcp`, {
      method: 'POST',
      headers: {
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'resources/read', params: { uri } }),
    });
    const answer = await legacy.json();
    assert.equal(answer.id, 6);
    assert.equal(answer.error.code, -32601);
    assert.equal(answer.result, undefined);
  });

  test('a member tool without a token: 401 with the challenge, the result in-band', async () => {
    const { status, headers, body } = await post({
      method: 'tools/call',
      params: { name: 'ic_get_my_membership', arguments: {}, _meta: envelope() },
    });
    assert.equal(status, 401);
    assert.match(headers.get('www-authenticate') ?? '', /^Bearer resource_metadata=/);
    assert.equal(body.result.isError, true);
    assert.equal(body.result.structuredContent.error, 'missing_token');
  });

  test('the SDK v2 client at its defaults initializes at 2025-11-25; in auto mode it settles on 2026-07-28', async () => {
    const byDefault = await connect({ auto: false });
    assert.equal(byDefault.getNegotiatedProtocolVersion(), '2025-11-25');
    const modern = await connect();
    assert.equal(modern.getNegotiatedProtocolVersion(), MODERN);
    assert.equal(modern.getServerVersion()?.name, 'agent-commons');
    assert.ok(modern.getServerCapabilities()?.tools);
    const listed = await modern.listTools();
    assert.ok(listed.tools.some((tool) => tool.name === 'ic_get_my_membership'));
  });

  test('the SDK v2 client calls a member tool, a sandbox write and a refused one', async () => {
    const member = await t.member('member', 'Eve');
    const token = await t.token(member, ['membership:read', 'membership:write']);
    const client = await connect({ token });
    const read = await client.callTool({ name: 'ic_get_my_membership', arguments: {} });
    assert.equal(read.isError, undefined, JSON.stringify(read.structuredContent));
    assert.equal((read.structuredContent as Record<string, unknown>).display_name, 'Eve');

    const sandbox = await t.token(member, ['membership:write'], { sandbox: true });
    const simulated = await (await connect({ token: sandbox })).callTool({
      name: 'ic_request_tier',
      arguments: { tier: 'resident' },
    });
    const receipt = simulated.structuredContent as Record<string, any>;
    assert.equal(receipt.sandbox, true);
    assert.equal(receipt.simulated, true);
    assert.deepEqual(
      await t.deps.db.selectFrom('tier_requests').selectAll().where('member_id', '=', member.id).execute(),
      [],
    );

    const refused = await client.callTool({ name: 'ic_request_tier', arguments: { tier: 'operator' } });
    assert.equal(refused.isError, true);
    assert.equal((refused.structuredContent as Record<string, unknown>).error, 'tier_not_requestable');

    const readOnly = await t.token(member, ['read:public']);
    const noScope = await (await connect({ token: readOnly })).callTool({
      name: 'ic_get_my_membership',
      arguments: {},
    });
    assert.equal(noScope.isError, true);
    assert.equal((noScope.structuredContent as Record<string, unknown>).error, 'insufficient_scope');
  });

  test('the Inspector CLI lists the tools at --protocol-era modern', async () => {
    const home = mkdtempSync(join(tmpdir(), 'inspector-home-'));
    try {
      const inspect = async (method: string) => {
        const args = ['--cli', `${t.baseUrl}/api/mcp`, '--transport', 'http', '--protocol-era', 'modern'];
        const { stdout } = await promisify(execFile)(
          process.execPath,
          [INSPECTOR, ...args, '--method', method, '--format', 'json'],
          { env: { ...process.env, HOME: home, MCP_AUTO_OPEN_ENABLED: 'false' }, timeout: 60_000 },
        );
        return JSON.parse(stdout).result;
      };
      const listed = await inspect('tools/list');
      assert.ok(listed.tools.some((tool: { name: string }) => tool.name === 'ic_health'));
      assert.equal((await inspect('initialize')).protocolVersion, MODERN);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
