// The recorded wire corpus (test/fixtures/wire-corpus.json): a fixed list of requests sent to the
// real app on a real port and a fresh SQLite database seeded the same way every time, and what came
// back, normalised only where a value is fresh on every run (dates, generated ids and tokens, the
// port). test/wire-corpus.test.ts replays it; scripts/record-wire-corpus.ts records it again.
import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { createSession, SESSION_COOKIE } from '../../src/domain/auth/sessions.ts';
import { createMember } from '../../src/domain/members/members.ts';
import { defineOperation } from '../../src/operations/types.ts';
import { startTestApp, type TestApp } from './app.ts';
import { cacheEvent } from './community.ts';
import { legacyEcho } from './test-operations.ts';

export const CORPUS_FILE = new URL('../fixtures/wire-corpus.json', import.meta.url);

/** A test-only write: deprecated and aliased, so its answers carry Deprecation and Sunset. */
const legacyPost = defineOperation<{ note?: string }, { ok: boolean; note?: string }>({
  ...legacyEcho,
  id: 'legacyPost',
  method: 'POST',
  path: '/api/test/legacy-post',
  aliases: ['/api/test/old-post'],
  inputFrom: 'body',
});

/**
 * One request. Header values and the body may name a credential by placeholder (TOKEN, NARROW,
 * SANDBOX, WRITER, READER, COOKIE, EVENT_URL), filled in when sent; the recording keeps the placeholder.
 */
export interface CorpusCase {
  name: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** No X-Request-Id: the server makes one up (a UUID, normalised). */
  freshId?: boolean;
}

export interface Recorded {
  name: string;
  method: string;
  path: string;
  status: number;
  headers: Record<string, string>;
  /** The body as text (gunzipped when sent gzipped), or its digest and length when it is long. */
  body: string | { sha256: string; length: number; starts: string };
}

const json = { 'content-type': 'application/json' };
const accept = 'application/json, text/event-stream';
const mcpJson = { accept, 'content-type': 'application/json' };
const mcpLatest = { ...mcpJson, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION };
const rpc = (id: number | string | null, method: string, params?: unknown) =>
  JSON.stringify({
    jsonrpc: '2.0',
    ...(id !== null && { id }),
    method,
    ...(params !== undefined && { params }),
  });
const tool = (id: number, name: string, args: Record<string, unknown> = {}) =>
  rpc(id, 'tools/call', { name, arguments: args });
const task = (id: number, capability: string, args: Record<string, unknown> = {}) =>
  rpc(id, 'tasks/send', { capability, arguments: args });
const story = (id: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ id, event_title: 'Corpus night', date: 'MAY 08', ...extra });
const highlights = '/api/ingest/highlights/pending';

const get = (name: string, path: string, headers?: Record<string, string>): CorpusCase => ({
  name,
  method: 'GET',
  path,
  headers,
});
const post = (name: string, path: string, headers: Record<string, string>, body: string): CorpusCase => ({
  name,
  method: 'POST',
  path,
  headers,
  body,
});

export const CASES: CorpusCase[] = [
  // REST reads.
  get('upcoming, anonymous', '/api/events/upcoming'),
  get('upcoming, limit', '/api/events/upcoming?limit=1'),
  get('upcoming, encoded limit', '/api/events/upcoming?limit=%31'),
  get('upcoming, limit 0', '/api/events/upcoming?limit=0'),
  get('upcoming, limit not a number', '/api/events/upcoming?limit=abc'),
  get('upcoming, limit twice', '/api/events/upcoming?limit=1&limit=2'),
  get('upcoming, unknown parameter', '/api/events/upcoming?bogus=1'),
  get('upcoming, empty query', '/api/events/upcoming?'),
  get('upcoming, gzip', '/api/events/upcoming', { 'accept-encoding': 'gzip, deflate' }),
  get('upcoming, gzip refused', '/api/events/upcoming', { 'accept-encoding': 'br;q=1, gzip;q=0' }),
  get('upcoming, small and gzip', '/api/events/upcoming?limit=1', { 'accept-encoding': 'gzip' }),
  get('upcoming, bearer', '/api/events/upcoming', { authorization: 'Bearer TOKEN' }),
  get('upcoming, bad bearer', '/api/events/upcoming', { authorization: 'Bearer agt_not_a_real_token' }),
  get('upcoming, narrow bearer', '/api/events/upcoming', { authorization: 'Bearer NARROW' }),
  { ...get('upcoming, no request id', '/api/events/upcoming?limit=abc'), freshId: true },
  get('upcoming, encoded path', '/api/events/upcomin%67'),
  get('upcoming, trailing slash', '/api/events/upcoming/'),
  get('upcoming, fragment', '/api/events/upcoming#top'),
  { ...get('upcoming, with a body', '/api/events/upcoming', json), body: '{}' },
  { name: 'upcoming, HEAD', method: 'HEAD', path: '/api/events/upcoming' },
  { name: 'upcoming, OPTIONS', method: 'OPTIONS', path: '/api/events/upcoming' },
  get('event lookup', '/api/events/get?url=EVENT_URL'),
  get('event lookup, not cached', '/api/events/get?url=https://lu.ma/not-cached'),
  get('event lookup, foreign host', '/api/events/get?url=https://example.com/elsewhere'),
  get('event lookup, no url', '/api/events/get'),
  get('donations', '/api/payments/donations'),
  get('setup-check, anonymous', '/api/agent/setup-check'),
  get('setup-check, bearer', '/api/agent/setup-check', { authorization: 'Bearer TOKEN' }),
  get('setup-check, bearer again', '/api/agent/setup-check', { authorization: 'Bearer TOKEN' }),
  get('setup-check, sandbox bearer', '/api/agent/setup-check', { authorization: 'Bearer SANDBOX' }),
  get('setup-check, bad bearer', '/api/agent/setup-check', { authorization: 'Bearer agt_not_a_real_token' }),
  get('directory search, bearer', '/api/directory/search?q=Ada', { authorization: 'Bearer TOKEN' }),
  get('directory search, anonymous', '/api/directory/search?q=Ada'),
  get('tier, cookie', '/api/tier/me', { cookie: 'COOKIE' }),
  get('tier, bearer', '/api/tier/me', { authorization: 'Bearer TOKEN' }),
  get('tier, anonymous', '/api/tier/me'),
  get('activity, bearer', '/api/activity/me?limit=2', { authorization: 'Bearer TOKEN' }),
  get('leaderboard', '/api/leaderboard'),
  get('resources, bearer', '/api/resources/list', { authorization: 'Bearer TOKEN' }),
  get('deprecated operation', '/api/test/legacy-echo?note=hi'),
  get('deprecated operation, alias, refused', '/api/test/old-echo?note=much-longer-than-twenty'),
  get('unknown API path', '/api/no/such/thing'),
  get('unknown API path, bearer', '/api/no/such/thing', { authorization: 'Bearer TOKEN' }),
  get('unknown page', '/no/such/page'),
  {
    name: 'unknown API path, DELETE',
    method: 'DELETE',
    path: '/api/tier/request',
    headers: json,
    body: '{}',
  },
  // REST writes.
  post('highlight', highlights, { ...json, authorization: 'Bearer WRITER' }, story('corpus-first')),
  post(
    'highlight, rewritten',
    highlights,
    { ...json, authorization: 'Bearer WRITER' },
    story('corpus-first', { dek: 'Refreshed.' }),
  ),
  post(
    'highlight, wrapped',
    highlights,
    { ...json, authorization: 'Bearer WRITER' },
    JSON.stringify({ story: JSON.parse(story('corpus-wrapped')) }),
  ),
  post(
    'highlight, idempotency key',
    highlights,
    { ...json, authorization: 'Bearer WRITER', 'idempotency-key': 'corpus-key-1' },
    story('corpus-keyed'),
  ),
  post(
    'highlight, idempotent retry',
    highlights,
    { ...json, authorization: 'Bearer WRITER', 'idempotency-key': 'corpus-key-1' },
    story('corpus-keyed'),
  ),
  post(
    'highlight, key reused with another body',
    highlights,
    { ...json, authorization: 'Bearer WRITER', 'idempotency-key': 'corpus-key-1' },
    story('corpus-other'),
  ),
  post(
    'highlight, charset',
    highlights,
    { authorization: 'Bearer WRITER', 'content-type': 'application/json; charset=utf-8' },
    story('corpus-charset'),
  ),
  post(
    'highlight, charset without space',
    highlights,
    { authorization: 'Bearer WRITER', 'content-type': 'application/json;charset=utf-8' },
    story('not a slug'),
  ),
  post('highlight, bad slug', highlights, { ...json, authorization: 'Bearer WRITER' }, story('not a slug')),
  post('highlight, bad JSON', highlights, { ...json, authorization: 'Bearer WRITER' }, '{"id":'),
  post(
    'highlight, __proto__ body',
    highlights,
    { ...json, authorization: 'Bearer WRITER' },
    '{"__proto__":{"x":1},"id":"corpus-poisoned"}',
  ),
  post(
    'highlight, constructor.prototype body',
    highlights,
    { ...json, authorization: 'Bearer WRITER' },
    '{"constructor":{"prototype":{"x":1}},"id":"corpus-poisoned"}',
  ),
  post('highlight, null body', highlights, { ...json, authorization: 'Bearer WRITER' }, 'null'),
  post('highlight, blank body', highlights, { ...json, authorization: 'Bearer WRITER' }, ' '),
  post(
    'highlight, not UTF-8 JSON',
    highlights,
    { ...json, authorization: 'Bearer WRITER' },
    '\u00e9t\u00e9 \uffff',
  ),
  post(
    'highlight, byte order mark',
    highlights,
    { ...json, authorization: 'Bearer WRITER' },
    `\ufeff${story('corpus-bom')}`,
  ),
  post('highlight, empty body', highlights, { ...json, authorization: 'Bearer WRITER' }, ''),
  post(
    'highlight, wrong content type',
    highlights,
    { 'content-type': 'text/plain', authorization: 'Bearer WRITER' },
    story('corpus-text'),
  ),
  post(
    'highlight, upper-case content type',
    highlights,
    { 'content-type': 'Application/JSON', authorization: 'Bearer WRITER' },
    story('not a slug'),
  ),
  post('highlight, no content type', highlights, { authorization: 'Bearer WRITER' }, story('corpus-untyped')),
  post(
    'highlight, gzip content encoding',
    highlights,
    { ...json, 'content-encoding': 'gzip', authorization: 'Bearer WRITER' },
    story('not a slug'),
  ),
  post(
    'highlight, oversize body',
    highlights,
    { ...json, authorization: 'Bearer WRITER' },
    story('too-large', { dek: 'x'.repeat(300 * 1024) }),
  ),
  post(
    'highlight, query string',
    `${highlights}?x=1`,
    { ...json, authorization: 'Bearer WRITER' },
    story('not a slug'),
  ),
  post('highlight, anonymous', highlights, json, story('corpus-anonymous')),
  post(
    'highlight, reader token',
    highlights,
    { ...json, authorization: 'Bearer READER' },
    story('corpus-reader'),
  ),
  post(
    'highlight, bad bearer',
    highlights,
    { ...json, authorization: 'Bearer agt_not_a_real_token' },
    story('corpus-forged'),
  ),
  post('deprecated write', '/api/test/legacy-post', json, '{"note":"hello"}'),
  post(
    'deprecated write, alias, refused',
    '/api/test/old-post',
    json,
    '{"note":"far too long for the twenty characters"}',
  ),
  post('deprecated write, bad JSON', '/api/test/legacy-post', json, '{"note":'),
  post('POST to a read', '/api/events/upcoming', json, '{}'),
  // MCP.
  post(
    'mcp initialize',
    '/api/mcp',
    mcpJson,
    rpc(1, 'initialize', {
      protocolVersion: LATEST_PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: 'corpus', version: '1' },
    }),
  ),
  post('mcp tools/list', '/api/mcp', mcpLatest, rpc(2, 'tools/list')),
  post('mcp ping', '/api/mcp', mcpLatest, rpc(3, 'ping')),
  post('mcp tools/call upcoming', '/api/mcp', mcpLatest, tool(4, 'ic_events_list_upcoming', { limit: 1 })),
  post(
    'mcp tools/call membership, bearer',
    '/api/mcp',
    { ...mcpLatest, authorization: 'Bearer TOKEN' },
    tool(5, 'ic_get_my_membership'),
  ),
  post('mcp tools/call membership, anonymous', '/api/mcp', mcpLatest, tool(6, 'ic_get_my_membership')),
  post(
    'mcp tools/call, scope missing',
    '/api/mcp',
    { ...mcpLatest, authorization: 'Bearer NARROW' },
    tool(7, 'ic_events_rsvp', {}),
  ),
  post(
    'mcp tools/call, bad bearer',
    '/api/mcp',
    { ...mcpLatest, authorization: 'Bearer agt_not_a_real_token' },
    tool(8, 'ic_get_my_membership'),
  ),
  post('mcp tools/call, unknown tool', '/api/mcp', mcpLatest, tool(9, 'no_such_tool')),
  post(
    'mcp tools/call, bad arguments',
    '/api/mcp',
    mcpLatest,
    tool(10, 'ic_events_list_upcoming', { limit: 'many' }),
  ),
  post(
    'mcp batch',
    '/api/mcp',
    mcpLatest,
    `[${rpc(11, 'ping')},${tool(12, 'ic_events_list_upcoming', { limit: 1 })}]`,
  ),
  post('mcp batch, repeated id', '/api/mcp', mcpLatest, `[${rpc(13, 'ping')},${rpc(13, 'ping')}]`),
  post('mcp notification', '/api/mcp', mcpLatest, rpc(null, 'notifications/initialized')),
  post('mcp bad JSON', '/api/mcp', mcpLatest, '{"jsonrpc":"2.0","id":14,'),
  post('mcp not JSON-RPC', '/api/mcp', mcpLatest, '{"not":"json-rpc"}'),
  post(
    'mcp __proto__ body',
    '/api/mcp',
    mcpLatest,
    '{"__proto__":{"x":1},"jsonrpc":"2.0","id":15,"method":"ping"}',
  ),
  post(
    'mcp accept without event-stream',
    '/api/mcp',
    { ...mcpLatest, accept: 'application/json' },
    rpc(16, 'ping'),
  ),
  post('mcp wrong content type', '/api/mcp', { ...mcpLatest, 'content-type': 'text/plain' }, rpc(17, 'ping')),
  post(
    'mcp foreign origin',
    '/api/mcp',
    { ...mcpLatest, origin: 'https://elsewhere.example' },
    rpc(18, 'ping'),
  ),
  post(
    'mcp unknown protocol version',
    '/api/mcp',
    { ...mcpJson, 'mcp-protocol-version': '1999-01-01' },
    rpc(19, 'ping'),
  ),
  post('mcp empty body', '/api/mcp', mcpJson, ''),
  post(
    'mcp oversize body',
    '/api/mcp',
    mcpJson,
    tool(20, 'ic_events_list_upcoming', { padding: 'x'.repeat(2_000_000) }),
  ),
  post('mcp query string', '/api/mcp?x=1', mcpJson, rpc(21, 'ping')),
  get('mcp GET', '/api/mcp', mcpJson),
  // A2A.
  post(
    'a2a message send',
    '/api/a2a',
    json,
    rpc(1, 'message/send', {
      message: {
        role: 'user',
        messageId: 'corpus-message-1',
        parts: [{ kind: 'text', text: 'upcoming events' }],
      },
    }),
  ),
  post('a2a tasks/send upcoming', '/api/a2a', json, task(2, 'ic_events_list_upcoming', { limit: 1 })),
  post(
    'a2a tasks/send membership, bearer',
    '/api/a2a',
    { ...json, authorization: 'Bearer TOKEN' },
    task(3, 'ic_get_my_membership'),
  ),
  post('a2a tasks/send membership, anonymous', '/api/a2a', json, task(4, 'ic_get_my_membership')),
  post(
    'a2a tasks/send, bad bearer',
    '/api/a2a',
    { ...json, authorization: 'Bearer agt_not_a_real_token' },
    task(5, 'ic_get_my_membership'),
  ),
  post(
    'a2a tasks/send, version 1.0',
    '/api/a2a',
    { ...json, authorization: 'Bearer TOKEN', 'a2a-version': '1.0' },
    task(6, 'ic_get_my_membership'),
  ),
  post('a2a unknown version', '/api/a2a', { ...json, 'a2a-version': '9.9' }, task(7, 'ic_health')),
  post('a2a tasks/get, unknown task', '/api/a2a', json, rpc(8, 'tasks/get', { id: 'no-such-task' })),
  post('a2a unknown capability', '/api/a2a', json, task(9, 'no_such_capability')),
  post('a2a bad method', '/api/a2a', json, rpc(10, 'no/such/method')),
  post('a2a batch', '/api/a2a', json, `[${task(11, 'ic_health')},${rpc(12, 'no/such/method')}]`),
  post('a2a empty batch', '/api/a2a', json, '[]'),
  post(
    'a2a notification',
    '/api/a2a',
    json,
    rpc(null, 'tasks/send', { capability: 'ic_health', arguments: {} }),
  ),
  post('a2a bad JSON', '/api/a2a', json, '{"jsonrpc":"2.0","id":13,'),
  post(
    'a2a __proto__ body',
    '/api/a2a',
    json,
    '{"__proto__":{"x":1},"jsonrpc":"2.0","id":14,"method":"tasks/send"}',
  ),
  post('a2a wrong content type', '/api/a2a', { 'content-type': 'text/plain' }, task(15, 'ic_health')),
  post('a2a version in the query', '/api/a2a?A2A-Version=1.0', json, task(16, 'ic_health')),
  post('a2a empty body', '/api/a2a', json, ''),
  // Pages and documents.
  get('home page', '/'),
  get('home page, signed in', '/', { cookie: 'COOKIE' }),
  get('sign-in page', '/signin'),
  get('reference page', '/docs'),
  get('openapi', '/openapi.json'),
  get('llms.txt', '/llms.txt'),
  get('agent card', '/.well-known/agent-card.json'),
  get('mcp discovery', '/.well-known/mcp.json'),
  get('liveness', '/healthz'),
  get('operator console, anonymous', '/operator'),
];

/** Each credential and seeded value a case may name, made the same way on every run. */
async function seed(app: TestApp): Promise<Record<string, string>> {
  const eventUrl = await cacheEvent(app, 'corpus-read');
  // Eight events: the upcoming answer passes the size from which it is also kept gzipped.
  for (let i = 2; i <= 8; i++) await cacheEvent(app, `corpus-${i}`, 24 * i);
  const member = await createMember(app.deps.db, app.clock, app.deps.tiers, {
    email: 'ada@corpus.example',
    name: 'Ada Corpus',
    tier: 'core',
  });
  const writer = await createMember(app.deps.db, app.clock, app.deps.tiers, {
    email: 'grace@corpus.example',
    name: 'Grace Corpus',
    tier: 'core',
  });
  return {
    TOKEN: await app.token(member, [
      'read:public',
      'events:read_upcoming',
      'directory:search',
      'membership:read',
    ]),
    NARROW: await app.token(member, ['read:public']),
    SANDBOX: await app.token(member, ['read:public'], { sandbox: true }),
    WRITER: await app.token(writer, ['events:submit_recap']),
    READER: await app.token(writer, ['read:public']),
    COOKIE: `${SESSION_COOKIE}=${await createSession(app.deps.db, app.clock, member.id)}`,
    EVENT_URL: encodeURIComponent(eventUrl),
  };
}

interface Wire {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  raw: Buffer;
}

/** One raw HTTP/1.1 request, so the path (a fragment, an encoding) and headers go out as written. */
function send(baseUrl: string, method: string, path: string, headers: Record<string, string>, body?: string) {
  return new Promise<Wire>((resolve, reject) => {
    const { hostname, port } = new URL(baseUrl);
    const sent =
      body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) };
    const outgoing = httpRequest(
      { hostname, port, path, method, headers: sent, agent: false },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            raw: Buffer.concat(chunks),
          }),
        );
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** Values fresh on every run written the same way: the port, generated ids and credentials. */
function normalised(text: string, baseUrl: string, secrets: Record<string, string>): string {
  let out = text.replaceAll(baseUrl, 'BASE').replaceAll(new URL(baseUrl).host, 'HOST');
  for (const [name, value] of Object.entries(secrets)) {
    if (value.length <= 8) continue;
    // A token's first characters are its prefix, which answers show.
    out = out.replaceAll(value, name).replaceAll(value.slice(0, 10), `${name}_PREFIX`);
  }
  return out
    .replace(UUID, 'UUID')
    .replace(/\bmem_[A-Za-z0-9_-]{6,}/g, 'MEMBER_ID')
    .replace(/\btok_[A-Za-z0-9_-]{6,}/g, 'TOKEN_ID')
    .replace(/nonce-[A-Za-z0-9+/=_-]+/g, 'nonce-NONCE')
    .replace(/nonce="[A-Za-z0-9+/=_-]+"/g, 'nonce="NONCE"')
    .replace(/\bcsrf_[0-9a-f]+/g, 'csrf_CSRF')
    .replace(/name="csrf" value="[^"]*"/g, 'name="csrf" value="CSRF"');
}

/** Headers that say nothing of the answer (the connection's, the moment's). */
const VOLATILE_HEADERS = new Set(['date', 'connection', 'keep-alive']);
const LONG_BODY = 4096;

function recordOf(item: CorpusCase, wire: Wire, baseUrl: string, secrets: Record<string, string>): Recorded {
  const headers: Record<string, string> = {};
  // In the order sent: the recording shows a header that moved, too.
  for (const name of Object.keys(wire.headers)) {
    if (VOLATILE_HEADERS.has(name)) continue;
    headers[name] = normalised(String(wire.headers[name]), baseUrl, secrets);
  }
  const raw = wire.headers['content-encoding'] === 'gzip' ? gunzipSync(wire.raw) : wire.raw;
  const text = normalised(raw.toString('utf8'), baseUrl, secrets);
  const body =
    text.length <= LONG_BODY
      ? text
      : {
          sha256: createHash('sha256').update(text).digest('hex'),
          length: text.length,
          starts: text.slice(0, 200),
        };
  return { name: item.name, method: item.method, path: item.path, status: wire.status, headers, body };
}

/** The corpus sent to a fresh app, in order, each case from an address of its own. */
export async function recordCorpus(): Promise<Recorded[]> {
  const app = await startTestApp({
    limits: { highlightsPerDay: 40 },
    config: { trustProxy: { addresses: ['127.0.0.1'] } },
    extraOperations: [legacyEcho, legacyPost],
  });
  try {
    const secrets = await seed(app);
    const fill = (text: string) =>
      text.replace(/\b(TOKEN|NARROW|SANDBOX|WRITER|READER|COOKIE|EVENT_URL)\b/g, (name) => secrets[name]);
    const records: Recorded[] = [];
    for (const [index, item] of CASES.entries()) {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(item.headers ?? {})) headers[name] = fill(value);
      if (!item.freshId) headers['x-request-id'] = `corpus-${index}`;
      headers['x-forwarded-for'] = `198.18.${Math.floor(index / 250)}.${(index % 250) + 1}`;
      const path = fill(item.path);
      const body = item.body === undefined ? undefined : fill(item.body);
      // A moment of its own: what a case logs sorts after what the cases before it logged.
      app.clock.advance(1);
      const wire = await send(app.baseUrl, item.method, path, headers, body);
      records.push(recordOf(item, wire, app.baseUrl, secrets));
    }
    return records;
  } finally {
    await app.close();
  }
}
