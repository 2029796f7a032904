// Our ExchangeTransport (src/surfaces/mcp-transport.ts) against the SDK's own Streamable HTTP
// transport (src/surfaces/mcp-sdk-transport.ts), both mounted on the same app: the same exchanges
// get the same status and body from each (docs/decisions.md, "MCP transport", says why ours is kept).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { OPERATIONS } from '../src/operations/registry.ts';
import { registerMcpSurface } from '../src/surfaces/mcp.ts';
import { startTestApp, type TestApp } from './support/app.ts';

const OURS = '/api/mcp';
const SDK = '/api/mcp-sdk';
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

const call = (id: number | string, name: string, args: unknown = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

interface Exchange {
  name: string;
  body: string;
  headers?: Record<string, string>;
  token?: boolean;
}

const json = (message: unknown) => JSON.stringify(message);

const EXCHANGES: Exchange[] = [
  {
    name: 'initialize',
    body: json({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: LATEST_PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: 'equivalence', version: '1.0.0' },
      },
    }),
  },
  {
    name: 'initialize without clientInfo',
    body: json({ jsonrpc: '2.0', id: 0, method: 'initialize', params: {} }),
  },
  { name: 'notification alone', body: json({ jsonrpc: '2.0', method: 'notifications/initialized' }) },
  { name: 'ping', body: json({ jsonrpc: '2.0', id: 'p', method: 'ping' }) },
  { name: 'tools/list', body: json({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) },
  { name: 'tools/call, public read', body: json(call(2, 'ic_events_list_upcoming', { limit: 3 })) },
  { name: 'tools/call with a token', body: json(call(3, 'ic_get_my_membership')), token: true },
  { name: 'tools/call refused (no token)', body: json(call(4, 'ic_get_my_membership')) },
  { name: 'tools/call, unknown tool', body: json(call(5, 'ic_no_such_tool')) },
  { name: 'tools/call, arguments a string', body: json(call(6, 'ic_health', 'text')) },
  {
    name: 'tools/call, arguments off schema',
    body: json(call(7, 'ic_events_list_upcoming', { limit: 'x' })),
  },
  { name: 'unknown method', body: json({ jsonrpc: '2.0', id: 8, method: 'resources/list' }) },
  { name: 'bad JSON', body: '{"jsonrpc":' },
  { name: 'JSON, not JSON-RPC', body: json({ hello: 'world' }) },
  {
    name: 'batch',
    body: json([
      call('b', 'ic_health'),
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      call('a', 'ic_get_my_membership'),
    ]),
    token: true,
  },
  { name: 'batch repeating an id', body: json([call(1, 'ic_health'), call(1, 'ic_health')]) },
  {
    name: 'batch of two initializes',
    body: json([{ jsonrpc: '2.0', id: 1, method: 'initialize' }, call(2, 'ic_health')]),
  },
  { name: 'batch over 100', body: json(Array.from({ length: 101 }, (_, i) => call(i, 'ic_health'))) },
  {
    name: 'Accept without event-stream',
    body: json(call(9, 'ic_health')),
    headers: { accept: 'application/json' },
  },
  {
    name: 'Content-Type text/plain',
    body: json(call(10, 'ic_health')),
    headers: { 'content-type': 'text/plain' },
  },
  { name: 'empty body', body: '' },
];

describe('the SDK transport and ours answer alike', () => {
  let t: TestApp;
  let token: string;
  before(async () => {
    t = await startTestApp({
      extend: (app, deps) => registerMcpSurface(app, deps, OPERATIONS, { transport: 'sdk', path: SDK }),
    });
    token = await t.token(await t.member('member', 'Ada Example'), ['membership:read']);
  });
  after(() => t?.close());

  async function post(path: string, exchange: Exchange) {
    const headers: Record<string, string> = {
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
      ...exchange.headers,
    };
    if (exchange.token) headers.authorization = `Bearer ${token}`;
    const response = await fetch(t.baseUrl + path, { method: 'POST', headers, body: exchange.body });
    // Request ids differ from call to call; everything else must not.
    const body = (await response.text()).replace(UUID, '<uuid>');
    return { status: response.status, body, challenge: response.headers.get('www-authenticate') };
  }

  for (const exchange of EXCHANGES) {
    test(exchange.name, async () => {
      const ours = await post(OURS, exchange);
      const sdk = await post(SDK, exchange);
      assert.deepEqual(sdk, ours);
    });
  }

  test('the exchanges reach the tools (not refusals alike)', async () => {
    const listed = await post(OURS, EXCHANGES.find(({ name }) => name === 'tools/list')!);
    assert.equal(listed.status, 200);
    assert.ok(JSON.parse(listed.body).result.tools.length > 10);
    const member = await post(OURS, EXCHANGES.find(({ name }) => name === 'tools/call with a token')!);
    assert.equal(JSON.parse(member.body).result.structuredContent.display_name, 'Ada Example');
  });
});
