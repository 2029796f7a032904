import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { PassThrough } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { frontDoorOf } from '../src/app.ts';
import { createSession, SESSION_COOKIE } from '../src/domain/auth/sessions.ts';
import { acceptsGzip } from '../src/http/serialized-answers.ts';
import { runOperationNow } from '../src/operations/pipeline/run.ts';
import { OPERATIONS } from '../src/operations/registry.ts';
import { defineOperation, type Operation } from '../src/operations/types.ts';
import { callRequestFrom } from '../src/surfaces/rest.ts';
import { startTestApp, type TestApp, type TestAppOptions } from './support/app.ts';
import { cacheEvent } from './support/community.ts';
import { freshDatabase, type TestDatabase } from './support/databases.ts';
import { legacyEcho } from './support/test-operations.ts';

/** A test-only read that fails inside its handler. */
const failingRead = defineOperation<{ note?: string }, { ok: boolean; note?: string }>({
  ...legacyEcho,
  id: 'failingRead',
  path: '/api/test/failing-read',
  aliases: undefined,
  deprecated: undefined,
  async handler() {
    throw new Error('the database went away');
  },
});

/** The same, thrown by a handler that answers without a promise (the pipeline's synchronous path). */
const failingNow = defineOperation<{ note?: string }, { ok: boolean; note?: string }>({
  ...failingRead,
  id: 'failingNow',
  path: '/api/test/failing-now',
  handler() {
    throw new Error('the cache went away');
  },
});

interface Wire {
  raw: Buffer;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** One raw HTTP/1.1 request, so headers and body are seen exactly as sent. */
function send(baseUrl: string, method: string, path: string, headers: Record<string, string>, body?: string) {
  return new Promise<Wire>((resolve, reject) => {
    const { hostname, port } = new URL(baseUrl);
    const sent =
      body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) };
    // The path goes out as written (a URL would lose its fragment).
    const options = { hostname, port, path, method, headers: sent, agent: false };
    const outgoing = httpRequest(options, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const raw = Buffer.concat(chunks);
        // latin1 maps bytes to characters one to one: a gzipped body compares exactly too.
        const text = raw.toString('latin1');
        resolve({ status: response.statusCode ?? 0, headers: response.headers, raw, text });
      });
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/**
 * What must match between the two ways of answering: everything but the date and connection lines,
 * with each server's own address (setup-check and challenges name it) written the same way.
 */
function comparable(wire: Wire, baseUrl: string) {
  const { date, connection, 'keep-alive': keepAlive, ...rest } = wire.headers;
  const headers = Object.fromEntries(
    Object.entries(rest).map(([name, value]) => [name, String(value).replaceAll(baseUrl, 'BASE')]),
  );
  return { status: wire.status, headers, text: wire.text.replaceAll(baseUrl, 'BASE') };
}

type Normalise = (wire: Wire, baseUrl: string) => unknown;

/** Two apps on one fresh database: one with the door before Fastify, one where Fastify answers all. */
function appsWithAndWithoutTheDoor(options: Omit<TestAppOptions, 'database' | 'frontDoor'>) {
  const apps = {} as { database: TestDatabase; direct: TestApp; routed: TestApp };
  before(async () => {
    apps.database = await freshDatabase('sqlite');
    apps.direct = await startTestApp({ ...options, database: apps.database });
    apps.routed = await startTestApp({ ...options, database: apps.database, frontDoor: false });
  });
  after(async () => {
    await apps.direct?.close();
    await apps.routed?.close();
    await apps.database?.drop();
  });
  return apps;
}

/**
 * Each request answered alike with and without the door, and none of them by the door. Each goes
 * with a request id of its own and from an address of its own (both apps behind a trusted proxy).
 */
async function assertFallsThrough(
  direct: TestApp,
  routed: TestApp,
  cases: [string, string, Record<string, string>, string?][],
  normalise: Normalise = comparable,
): Promise<void> {
  const reads = frontDoorOf(direct.app);
  const before = reads?.answered ?? 0;
  for (const [index, [method, path, sent, body]] of cases.entries()) {
    const headers = { ...sent, 'x-request-id': `fall-${index}`, 'x-forwarded-for': `203.0.113.${index + 1}` };
    const viaDirect = await send(direct.baseUrl, method, path, headers, body);
    const viaFastify = await send(routed.baseUrl, method, path, headers, body);
    assert.deepEqual(
      normalise(viaDirect, direct.baseUrl),
      normalise(viaFastify, routed.baseUrl),
      `${method} ${path} ${Object.keys(headers)}`,
    );
  }
  assert.equal(reads?.answered, before);
}

describe('GET operations answered before Fastify match the Fastify routes byte for byte', () => {
  let database: TestDatabase;
  let direct: TestApp;
  let routed: TestApp;
  let token: string;
  let narrowToken: string;
  let sandboxToken: string;
  let cookie: string;
  let eventUrl: string;

  const directLog = new PassThrough();
  const routedLog = new PassThrough();
  before(async () => {
    database = await freshDatabase('sqlite');
    // Both behind a trusted proxy, so the client address comes from X-Forwarded-For on both.
    const options = {
      database,
      logStream: directLog,
      limits: { anonymousPerMinute: 60 },
      config: { trustProxy: { addresses: ['127.0.0.1'] } },
      extraOperations: [legacyEcho, failingRead, failingNow],
    };
    direct = await startTestApp(options);
    routed = await startTestApp({ ...options, logStream: routedLog, frontDoor: false });
    eventUrl = await cacheEvent(direct, 'direct-read');
    // Eight events: the upcoming answer passes the size from which it is also kept gzipped.
    for (let i = 2; i <= 8; i++) await cacheEvent(direct, `read-${i}`, 24 * i);
    const member = await direct.member('core', 'Ada Direct');
    token = await direct.token(member, ['read:public', 'events:read_upcoming', 'directory:search']);
    narrowToken = await direct.token(member, ['events:rsvp']);
    sandboxToken = await direct.token(member, ['read:public'], { sandbox: true });
    cookie = `${SESSION_COOKIE}=${await createSession(direct.deps.db, direct.clock, member.id)}`;
  });
  after(async () => {
    await direct?.close();
    await routed?.close();
    await database?.drop();
  });

  test('the same requests, in the same order, get the same status, headers and body', async () => {
    const eventPath = `/api/events/get?url=${encodeURIComponent(eventUrl)}`;
    const cases: { path: string; headers?: Record<string, string> }[] = [
      { path: '/api/events/upcoming' },
      { path: '/api/events/upcoming?limit=1' },
      { path: '/api/events/upcoming?limit=%31' },
      { path: '/api/events/upcoming?limit=0' },
      { path: '/api/events/upcoming?limit=abc' },
      { path: '/api/events/upcoming?limit=1&limit=2' },
      { path: '/api/events/upcoming?bogus=1' },
      { path: '/api/events/upcoming?' },
      { path: '/api/events/upcoming', headers: { 'accept-encoding': 'gzip, deflate' } },
      { path: '/api/events/upcoming', headers: { 'accept-encoding': 'br;q=1, gzip;q=0' } },
      { path: '/api/events/upcoming', headers: { 'accept-encoding': '*' } },
      { path: '/api/events/upcoming?limit=1', headers: { 'accept-encoding': 'gzip' } },
      { path: '/api/events/upcoming', headers: { authorization: `Bearer ${token}` } },
      { path: '/api/events/upcoming', headers: { authorization: 'Bearer agt_not_a_real_token' } },
      { path: '/api/events/upcoming', headers: { authorization: `Bearer ${narrowToken}` } },
      { path: '/api/events/upcoming', headers: { 'x-forwarded-for': '203.0.113.7' } },
      { path: '/api/events/upcoming', headers: { 'x-forwarded-for': '203.0.113.7, 10.0.0.2' } },
      { path: eventPath },
      { path: eventPath.replace('url=', 'luma=') },
      { path: '/api/events/get?url=https://lu.ma/not-cached' },
      { path: '/api/events/get?url=https://example.com/elsewhere' },
      { path: '/api/events/get' },
      { path: '/api/payments/donations' },
      { path: '/api/floor10/donations?limit=2' },
      { path: '/api/agent/setup-check' },
      { path: '/api/agent/setup-check', headers: { authorization: `Bearer ${token}` } },
      { path: '/api/agent/setup-check', headers: { authorization: `Bearer ${sandboxToken}` } },
      { path: '/api/directory/search?q=Ada', headers: { authorization: `Bearer ${token}` } },
      { path: '/api/directory/search?q=Ada' },
      { path: '/api/tier/me', headers: { cookie } },
      { path: '/api/tier/me', headers: { authorization: `Bearer ${token}` } },
      { path: '/api/tier/me' },
      { path: '/api/activity/me?limit=2', headers: { authorization: `Bearer ${token}` } },
      { path: '/api/leaderboard' },
      { path: '/api/resources/list', headers: { authorization: `Bearer ${token}` } },
      { path: '/api/test/legacy-echo?note=hi' },
      { path: '/api/test/old-echo?note=much-longer-than-twenty' },
      { path: '/api/test/failing-read' },
      { path: '/api/test/failing-now' },
      { path: '/api/test/failing-now', headers: { authorization: `Bearer ${token}` } },
    ];
    const before = frontDoorOf(direct.app)?.answered ?? 0;
    for (const [index, item] of cases.entries()) {
      const headers = { 'x-request-id': `compare-${index}`, ...item.headers };
      const viaDirect = await send(direct.baseUrl, 'GET', item.path, headers);
      const viaFastify = await send(routed.baseUrl, 'GET', item.path, headers);
      assert.deepEqual(
        comparable(viaDirect, direct.baseUrl),
        comparable(viaFastify, routed.baseUrl),
        `GET ${item.path}`,
      );
    }
    // Every case was answered directly on one side and by Fastify on the other.
    assert.equal((frontDoorOf(direct.app)?.answered ?? 0) - before, cases.length);
    assert.equal(frontDoorOf(routed.app), undefined);
  });

  test('a read whose every step answers at once (a cached token) runs with no promise, as the same answer', async () => {
    const setupCheck = OPERATIONS.find((op) => op.path === '/api/agent/setup-check') as Operation;
    const member = await direct.member('core', 'Ada At Once');
    const fresh = await direct.token(member, ['read:public']);
    const call = () =>
      callRequestFrom(
        { id: 'at-once', ip: '127.0.0.1', headers: { authorization: `Bearer ${fresh}` } },
        {},
        OPERATIONS,
      );
    const first = runOperationNow(direct.deps, setupCheck, call());
    assert.ok(first instanceof Promise, 'the first lookup reads the database');
    const read = await first;
    const again = runOperationNow(direct.deps, setupCheck, call());
    assert.ok(!(again instanceof Promise), 'the cached lookup answers at once');
    assert.equal(again.status, 200);
    assert.deepEqual(again.body, read.body);
    assert.equal((again.body as { checks: { member_id: string } }).checks.member_id, member.id);
  });

  test('the request is logged as Fastify logs it, without its query string', async () => {
    const lines = (stream: PassThrough) => {
      const seen: Record<string, unknown>[] = [];
      stream.on('data', (chunk: Buffer) => {
        for (const line of chunk.toString().split('\n').filter(Boolean)) {
          const { time, pid, hostname, responseTime, ...entry } = JSON.parse(line);
          if (entry.reqId === 'logged') seen.push({ ...entry, timed: typeof responseTime === 'number' });
        }
      });
      return seen;
    };
    const directLines = lines(directLog);
    const routedLines = lines(routedLog);
    const headers = { 'x-request-id': 'logged', 'x-forwarded-for': '198.51.100.11' };
    await send(direct.baseUrl, 'GET', '/api/events/upcoming?limit=1', headers);
    await send(routed.baseUrl, 'GET', '/api/events/upcoming?limit=1', headers);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(directLines, routedLines);
    assert.deepEqual(
      directLines.map((entry) => entry.msg),
      ['incoming request', 'request completed'],
    );
    assert.deepEqual(directLines[0].req, { method: 'GET', path: '/api/events/upcoming', id: 'logged' });
  });

  test('a cached answer of 1 KB or more goes gzipped to a client that accepts gzip, on both paths', async () => {
    for (const [app, label] of [
      [direct, 'direct'],
      [routed, 'fastify'],
    ] as const) {
      const from = { 'x-forwarded-for': '198.51.100.12' };
      const plain = await send(app.baseUrl, 'GET', '/api/events/upcoming', from);
      const zipped = await send(app.baseUrl, 'GET', '/api/events/upcoming', {
        ...from,
        'accept-encoding': 'gzip, deflate, br',
      });
      assert.equal(plain.status, 200, label);
      assert.equal(JSON.parse(plain.text).count, 8, label);
      assert.ok(plain.raw.length >= 1024, `${label}: ${plain.raw.length} bytes`);
      assert.equal(plain.headers['content-encoding'], undefined, label);
      assert.equal(plain.headers.vary, 'accept-encoding', label);
      assert.equal(zipped.headers['content-encoding'], 'gzip', label);
      assert.equal(zipped.headers.vary, 'accept-encoding', label);
      assert.equal(Number(zipped.headers['content-length']), zipped.raw.length, label);
      assert.ok(zipped.raw.length < plain.raw.length / 2, `${label}: ${zipped.raw.length} bytes gzipped`);
      assert.deepEqual(gunzipSync(zipped.raw), plain.raw, label);
      // A small answer is sent as it is, whatever the client accepts.
      const small = await send(app.baseUrl, 'GET', '/api/events/upcoming?limit=1', {
        ...from,
        'accept-encoding': 'gzip',
      });
      assert.equal(small.headers['content-encoding'], undefined, label);
      assert.equal(small.headers.vary, undefined, label);
      assert.equal(JSON.parse(small.text).count, 1, label);
    }
  });

  test('a small cached answer sent as text counts its length in bytes, on both paths', async () => {
    const name = 'Zoë Ōkubo 東京';
    const member = await direct.member('core', name);
    const wide = await direct.token(member, ['read:public']);
    for (const [app, label] of [
      [direct, 'direct'],
      [routed, 'fastify'],
    ] as const) {
      // Twice: the second answer is the kept one.
      for (const round of [1, 2]) {
        const answer = await send(app.baseUrl, 'GET', '/api/agent/setup-check', {
          authorization: `Bearer ${wide}`,
        });
        const where = `${label}, round ${round}`;
        assert.equal(answer.status, 200, where);
        assert.ok(answer.raw.length < 1024, `${where}: ${answer.raw.length} bytes`);
        const text = answer.raw.toString('utf8');
        assert.ok(answer.raw.length > text.length, `${where}: the name takes more bytes than characters`);
        assert.equal(Number(answer.headers['content-length']), answer.raw.length, where);
        assert.equal(JSON.parse(text).checks.member_name, name, where);
      }
    }
  });

  test('without X-Request-Id each answer carries a fresh id, also in its error body', async () => {
    // From an address of its own, so the other tests' rate counters stay the same on both servers.
    const from = { 'x-forwarded-for': '198.51.100.9' };
    const first = await send(direct.baseUrl, 'GET', '/api/events/upcoming?limit=abc', from);
    const second = await send(direct.baseUrl, 'GET', '/api/events/upcoming?limit=abc', from);
    const id = first.headers['x-request-id'];
    assert.match(String(id), /^[0-9a-f-]{36}$/);
    assert.notEqual(id, second.headers['x-request-id']);
    assert.equal(first.status, 400);
    assert.equal(JSON.parse(first.text).request_id, id);
  });

  test('what it cannot answer exactly as Fastify goes to Fastify', async () => {
    const headers = {};
    await assertFallsThrough(direct, routed, [
      ['HEAD', '/api/events/upcoming', headers],
      ['GET', '/api/events/upcoming', { ...headers, 'content-type': 'application/json' }, '{}'],
      ['GET', '/api/events/upcomin%67', headers],
      ['GET', '/api/events/upcoming/', headers],
      ['GET', '/api/events/upcoming#top', headers],
      ['POST', '/api/events/upcoming', headers],
    ]);
    // The encoded path is still the operation: Fastify decodes it and answers.
    const encoded = await send(direct.baseUrl, 'GET', '/api/events/upcomin%67', {
      'x-forwarded-for': '198.51.100.10',
    });
    assert.equal(encoded.status, 200);
    assert.equal(JSON.parse(encoded.text).count, 8);
  });
});

describe('a reused read at the front door', () => {
  let database: TestDatabase;
  let app: TestApp;
  before(async () => {
    database = await freshDatabase('sqlite');
    app = await startTestApp({ database });
  });
  after(async () => {
    await app?.close();
    await database?.drop();
  });

  test('the upcoming list is answered at once while it is reused, and read again once the reuse ends', async () => {
    const upcoming = OPERATIONS.find((op) => op.path === '/api/events/upcoming') as Operation;
    const call = () =>
      callRequestFrom({ id: 'at-once-list', ip: '198.51.100.40', headers: {} }, {}, OPERATIONS);
    const titles = (answer: { body: unknown }) =>
      (answer.body as { events: { title: string }[] }).events.map((event) => event.title);
    await cacheEvent(app, 'reused-first', 24);
    const first = runOperationNow(app.deps, upcoming, call());
    assert.ok(first instanceof Promise, 'the first read loads the list');
    const read = await first;
    const again = runOperationNow(app.deps, upcoming, call());
    assert.ok(!(again instanceof Promise), 'the reused list answers at once');
    assert.equal(again.status, 200);
    assert.deepEqual(again.body, read.body);
    assert.ok(!titles(again).includes('Event reused-then-new'));
    // An event stored meanwhile shows once the reuse ends, through a load again.
    await cacheEvent(app, 'reused-then-new', 1);
    app.clock.advance(3_000);
    const reloaded = runOperationNow(app.deps, upcoming, call());
    assert.ok(reloaded instanceof Promise, 'past the reuse the list is read again');
    const fresh = await reloaded;
    assert.equal(titles(fresh)[0], 'Event reused-then-new');
    assert.equal((fresh.body as { count: number }).count, (read.body as { count: number }).count + 1);
  });

  test('an event of the reused list is looked up at once; one past the list, from the table', async () => {
    const lookup = OPERATIONS.find((op) => op.path === '/api/events/get') as Operation;
    const upcomingUrl = await cacheEvent(app, 'lookup-upcoming', 30);
    const pastUrl = await cacheEvent(app, 'lookup-past', -48);
    app.clock.advance(3_000);
    const call = (url: string) =>
      callRequestFrom({ id: 'at-once-lookup', ip: '198.51.100.41', headers: {} }, { url }, OPERATIONS);
    const first = runOperationNow(app.deps, lookup, call(upcomingUrl));
    assert.ok(first instanceof Promise, 'the first lookup loads the list');
    assert.equal((await first).status, 200);
    const again = runOperationNow(app.deps, lookup, call(upcomingUrl));
    assert.ok(!(again instanceof Promise), 'an event of the reused list answers at once');
    assert.equal(again.status, 200);
    assert.equal((again.body as { event: { title: string } }).event.title, 'Event lookup-upcoming');
    // A past event is not in the upcoming list: still found, from the table, after a wait.
    const past = runOperationNow(app.deps, lookup, call(pastUrl));
    assert.ok(past instanceof Promise, 'an event past the list is read from the table');
    const pastAnswer = await past;
    assert.equal(pastAnswer.status, 200);
    assert.equal((pastAnswer.body as { event: { platform_url: string } }).event.platform_url, pastUrl);
    const missing = await runOperationNow(app.deps, lookup, call(`${upcomingUrl}-not-stored`));
    assert.equal(missing.status, 404);
    assert.equal((missing.body as { error: string }).error, 'event_not_found');
    // On the wire, through the front door, the at-once answer is the same body.
    const door = frontDoorOf(app.app);
    const answeredBefore = door?.answered ?? 0;
    const wire = await app.call('GET', `/api/events/get?url=${encodeURIComponent(upcomingUrl)}`);
    assert.equal(wire.status, 200);
    assert.deepEqual(wire.body, again.body);
    assert.equal(door?.answered, answeredBefore + 1, 'the front door answered the lookup');
  });
});

test('Accept-Encoding: gzip is taken when named or covered by *, with a weight above zero', () => {
  const cases: [string | undefined, boolean][] = [
    [undefined, false],
    ['', false],
    ['identity', false],
    ['deflate, br', false],
    ['gzip', true],
    ['GZip', true],
    ['x-gzip', true],
    ['gzip, deflate, br', true],
    ['br;q=1.0, gzip;q=0.5', true],
    ['gzip;q=0', false],
    ['gzip; q=0.000', false],
    ['gzip;q=abc', false],
    ['*', true],
    ['identity, *;q=0.1', true],
    ['*;q=0', false],
    ['gzip;q=0, *', false],
    ['*, gzip;q=0', false],
  ];
  for (const [header, expected] of cases) assert.equal(acceptsGzip(header), expected, String(header));
});

describe('MCP POSTs answered before Fastify match the Fastify route byte for byte', () => {
  const apps = appsWithAndWithoutTheDoor({ config: { trustProxy: { addresses: ['127.0.0.1'] } } });
  let direct: TestApp;
  let routed: TestApp;
  let token: string;
  let narrowToken: string;
  before(async () => {
    ({ direct, routed } = apps);
    await cacheEvent(direct, 'mcp-direct');
    const member = await direct.member('core', 'Ada Exchange');
    token = await direct.token(member, ['read:public', 'membership:read']);
    // events:rsvp is within the tier but not granted: a scope challenge on 2025-11-25.
    narrowToken = await direct.token(member, ['read:public']);
  });

  const call = (id: number | string, method: string, params?: Record<string, unknown>) =>
    ({ jsonrpc: '2.0', id, method, ...(params && { params }) }) as const;
  const tool = (id: number, name: string, args: Record<string, unknown> = {}) =>
    call(id, 'tools/call', { name, arguments: args });
  const initialize = call(1, 'initialize', {
    protocolVersion: LATEST_PROTOCOL_VERSION,
    capabilities: {},
    clientInfo: { name: 'door-check', version: '1' },
  });
  const accept = 'application/json, text/event-stream';
  const json = { accept, 'content-type': 'application/json' };

  test('the same exchanges, in the same order, get the same status, headers and body', async () => {
    const bearer = { ...json, authorization: `Bearer ${token}` };
    const latest = { ...json, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION };
    const cases: [Record<string, string>, string][] = [
      [json, JSON.stringify(initialize)],
      [latest, JSON.stringify(call(2, 'tools/list'))],
      [latest, JSON.stringify(call(3, 'ping'))],
      [latest, JSON.stringify(tool(4, 'ic_events_list_upcoming', { limit: 1 }))],
      [{ ...latest, ...bearer }, JSON.stringify(tool(5, 'ic_get_my_membership'))],
      [{ ...latest, ...bearer }, JSON.stringify(tool(6, 'ic_activity_get_recent', { limit: 2 }))],
      [latest, JSON.stringify(tool(7, 'ic_get_my_membership'))],
      [{ ...latest, authorization: `Bearer ${narrowToken}` }, JSON.stringify(tool(8, 'ic_events_rsvp', {}))],
      [
        { ...latest, authorization: 'Bearer agt_not_a_real_token' },
        JSON.stringify(tool(9, 'ic_get_my_membership')),
      ],
      [latest, JSON.stringify(tool(10, 'no_such_tool'))],
      [latest, JSON.stringify(tool(11, 'ic_events_list_upcoming', { limit: 'many' }))],
      [latest, JSON.stringify([call(12, 'ping'), tool(13, 'ic_events_list_upcoming', { limit: 1 })])],
      [latest, JSON.stringify([call(14, 'ping'), call(14, 'ping')])],
      [latest, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })],
      [latest, '{"jsonrpc":"2.0","id":15,'],
      [latest, '{"not":"json-rpc"}'],
      [latest, '\u00e9t\u00e9 \uffff'],
      [{ ...latest, accept: 'application/json' }, JSON.stringify(call(16, 'ping'))],
      [{ ...latest, 'content-type': 'text/plain' }, JSON.stringify(call(17, 'ping'))],
      [{ ...latest, origin: 'https://elsewhere.example' }, JSON.stringify(call(18, 'ping'))],
      [{ ...json, 'mcp-protocol-version': '1999-01-01' }, JSON.stringify(call(19, 'ping'))],
    ];
    const before = frontDoorOf(direct.app)?.answered ?? 0;
    for (const [index, [headers, body]] of cases.entries()) {
      // Each case from an address of its own: both servers count the same calls per address.
      const sent = { ...headers, 'x-request-id': `mcp-${index}`, 'x-forwarded-for': `192.0.2.${index + 1}` };
      const viaDirect = await send(direct.baseUrl, 'POST', '/api/mcp', sent, body);
      const viaFastify = await send(routed.baseUrl, 'POST', '/api/mcp', sent, body);
      assert.deepEqual(comparable(viaDirect, direct.baseUrl), comparable(viaFastify, routed.baseUrl), body);
    }
    assert.equal((frontDoorOf(direct.app)?.answered ?? 0) - before, cases.length);
    // The cases reach what they are about: a result, a tool's own answer, each refusal.
    const answers: Wire[] = [];
    for (const [index, [headers, body]] of cases.entries()) {
      const sent = { ...headers, 'x-forwarded-for': `198.51.100.${index + 1}` };
      answers.push(await send(direct.baseUrl, 'POST', '/api/mcp', sent, body));
    }
    const statuses = answers.map((answer) => answer.status);
    assert.match(String(answers[7].headers['www-authenticate']), /error="insufficient_scope".*events:rsvp/);
    assert.match(String(answers[8].headers['www-authenticate']), /error="invalid_token"/);
    assert.equal(JSON.parse(answers[5].text).result.structuredContent.ok, true);
    assert.equal(answers[13].text, '');
    assert.equal(answers[0].headers['access-control-expose-headers']?.includes('Mcp-Session-Id'), true);
    assert.deepEqual(
      statuses,
      [
        200, 200, 200, 200, 200, 200, 401, 200, 401, 200, 200, 200, 400, 202, 400, 400, 400, 406, 415, 403,
        400,
      ],
    );
  });

  test('what it cannot read as Fastify would goes to Fastify', async () => {
    const ping = JSON.stringify(call(1, 'ping'));
    const huge = JSON.stringify(tool(2, 'ic_events_list_upcoming', { padding: 'x'.repeat(2_000_000) }));
    const cases: [string, string, Record<string, string>, string?][] = [
      ['POST', '/api/mcp?x=1', json, ping],
      ['POST', '/api/mcp/', json, ping],
      ['POST', '/api/mcp', { accept }, ping],
      ['POST', '/api/mcp', { ...json, 'transfer-encoding': 'chunked' }, ping],
      ['POST', '/api/mcp', json, huge],
      ['POST', '/api/mcp', json, ''],
      ['GET', '/api/mcp', json],
      ['DELETE', '/api/mcp', json],
    ];
    await assertFallsThrough(direct, routed, cases);
  });
});

describe('A2A POSTs answered before Fastify match the Fastify route byte for byte', () => {
  const apps = appsWithAndWithoutTheDoor({ config: { trustProxy: { addresses: ['127.0.0.1'] } } });
  let direct: TestApp;
  let routed: TestApp;
  let token: string;
  before(async () => {
    ({ direct, routed } = apps);
    await cacheEvent(direct, 'a2a-direct');
    const member = await direct.member('core', 'Ada Envelope');
    token = await direct.token(member, ['read:public', 'membership:read']);
  });

  // Task and message ids are minted per call: the same on both sides once written alike.
  const sameIds = (wire: Wire, baseUrl: string) => {
    const view = comparable(wire, baseUrl);
    return {
      ...view,
      text: view.text.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, 'ID'),
    };
  };
  const rpc = (id: number | string | null, method: string, params?: unknown) =>
    JSON.stringify({
      jsonrpc: '2.0',
      ...(id !== null && { id }),
      method,
      ...(params !== undefined && { params }),
    });
  const task = (id: number, capability: string, args: Record<string, unknown> = {}) =>
    rpc(id, 'tasks/send', { capability, arguments: args });
  const json = { 'content-type': 'application/json' };

  test('the same envelopes, in the same order, get the same status, headers and body', async () => {
    const bearer = { ...json, authorization: `Bearer ${token}` };
    const cases: [Record<string, string>, string][] = [
      [json, task(1, 'ic_events_list_upcoming', { limit: 1 })],
      [bearer, task(2, 'ic_get_my_membership')],
      [bearer, task(3, 'ic_activity_get_recent', { limit: 2 })],
      [json, task(4, 'ic_get_my_membership')],
      [{ ...json, authorization: 'Bearer agt_not_a_real_token' }, task(5, 'ic_get_my_membership')],
      [{ ...bearer, 'a2a-version': '1.0' }, task(6, 'ic_get_my_membership')],
      [{ ...json, 'a2a-version': '9.9' }, task(7, 'ic_health')],
      [json, task(8, 'no_such_capability')],
      [json, task(9, 'ic_events_list_upcoming', { limit: 'many' })],
      [json, `[${task(10, 'ic_health')},${rpc(11, 'no/such/method')}]`],
      [json, '[]'],
      [json, rpc(null, 'tasks/send', { capability: 'ic_health', arguments: {} })],
      [json, '{"jsonrpc":"2.0","id":12,'],
      [json, '{"__proto__":{"x":1},"jsonrpc":"2.0","id":13,"method":"tasks/send"}'],
      [json, '"just a string"'],
      [{ 'content-type': 'text/plain' }, task(14, 'ic_health')],
    ];
    const before = frontDoorOf(direct.app)?.answered ?? 0;
    const answers: Wire[] = [];
    for (const [index, [headers, body]] of cases.entries()) {
      const sent = { ...headers, 'x-request-id': `a2a-${index}`, 'x-forwarded-for': `192.0.2.${index + 1}` };
      const viaDirect = await send(direct.baseUrl, 'POST', '/api/a2a', sent, body);
      const viaFastify = await send(routed.baseUrl, 'POST', '/api/a2a', sent, body);
      assert.deepEqual(sameIds(viaDirect, direct.baseUrl), sameIds(viaFastify, routed.baseUrl), body);
      answers.push(viaDirect);
    }
    assert.equal((frontDoorOf(direct.app)?.answered ?? 0) - before, cases.length);
    // The cases reach what they are about: results, the 401 challenge, parse and envelope errors.
    assert.deepEqual(
      answers.map((answer) => answer.status),
      [200, 200, 200, 401, 401, 200, 200, 200, 200, 200, 200, 204, 200, 200, 200, 200],
    );
    assert.equal(JSON.parse(answers[2].text).result.ok, true);
    assert.match(String(answers[3].headers['www-authenticate']), /^Bearer /);
    assert.match(String(answers[4].headers['www-authenticate']), /invalid_token/);
    assert.equal(JSON.parse(answers[12].text).error.code, -32700);
    assert.equal(
      JSON.parse(answers[13].text).error.code,
      -32600,
      'a prototype key is refused as an invalid request',
    );
  });

  test('what it cannot read as Fastify would goes to Fastify', async () => {
    const ping = task(1, 'ic_health');
    const cases: [string, string, Record<string, string>, string?][] = [
      ['POST', '/api/a2a?A2A-Version=1.0', json, ping],
      ['POST', '/api/a2a', {}, ping],
      ['POST', '/api/a2a', { ...json, 'transfer-encoding': 'chunked' }, ping],
      ['POST', '/api/a2a', json, task(2, 'ic_health', { padding: 'x'.repeat(3_000_000) })],
      ['POST', '/api/a2a', json, ''],
    ];
    await assertFallsThrough(direct, routed, cases, sameIds);
  });
});

/** A test-only write: deprecated, so its answers carry Deprecation and Sunset (a refused body's do not). */
const legacyPost = defineOperation<{ note?: string }, { ok: boolean; note?: string }>({
  ...legacyEcho,
  id: 'legacyPost',
  method: 'POST',
  path: '/api/test/legacy-post',
  aliases: ['/api/test/old-post'],
  inputFrom: 'body',
});

describe('REST POSTs answered before Fastify match the Fastify route byte for byte', () => {
  const apps = appsWithAndWithoutTheDoor({
    config: { trustProxy: { addresses: ['127.0.0.1'] } },
    limits: { highlightsPerDay: 20 },
    extraOperations: [legacyPost],
  });
  const sides = ['direct', 'routed'] as const;
  type Side = (typeof sides)[number];
  const tokens = {} as Record<Side, { writer: string; reader: string }>;
  before(async () => {
    // One member and one pair of tokens per side: each side spends its own quotas and claims its own
    // Idempotency-Keys, so both start every case from the same state.
    for (const side of sides) {
      const member = await apps[side].member('core', `Ada ${side}`);
      tokens[side] = {
        writer: await apps[side].token(member, ['events:submit_recap']),
        reader: await apps[side].token(member, ['read:public']),
      };
    }
  });

  const json = { 'content-type': 'application/json' };
  const highlights = '/api/ingest/highlights/pending';
  /** Each case names its side's token and story ids with SIDE; the answers are compared with SIDE put back. */
  const bySide = (wire: Wire, baseUrl: string, side: Side) => {
    const view = comparable(wire, baseUrl);
    const back = (text: string) => text.replaceAll(side, 'SIDE');
    return {
      ...view,
      headers: Object.fromEntries(Object.entries(view.headers).map(([name, value]) => [name, back(value)])),
      text: back(view.text),
    };
  };
  const story = (id: string, extra: Record<string, unknown> = {}) =>
    JSON.stringify({ id, event_title: 'Door night', date: 'MAY 08', ...extra });

  test('the same writes, in the same order, get the same status, headers and body', async () => {
    const writer = { ...json, authorization: 'Bearer WRITER' };
    const cases: [string, Record<string, string>, string][] = [
      [highlights, writer, story('SIDE-first')],
      [highlights, writer, story('SIDE-first', { dek: 'Refreshed.' })],
      [highlights, writer, JSON.stringify({ story: JSON.parse(story('SIDE-wrapped')) })],
      [highlights, { ...writer, 'idempotency-key': 'SIDE-key-1' }, story('SIDE-keyed')],
      [highlights, { ...writer, 'idempotency-key': 'SIDE-key-1' }, story('SIDE-keyed')],
      [highlights, { ...writer, 'content-type': 'application/json; charset=utf-8' }, story('SIDE-charset')],
      [highlights, writer, story('not a slug')],
      [highlights, writer, '{"id":'],
      [highlights, writer, '{"__proto__":{"x":1},"id":"SIDE-poisoned"}'],
      [highlights, writer, '{"constructor":{"prototype":{"x":1}},"id":"SIDE-poisoned"}'],
      [highlights, writer, 'null'],
      [highlights, writer, '[]'],
      [highlights, writer, ' '],
      [highlights, writer, '\u00e9t\u00e9 \uffff'],
      [highlights, writer, `\ufeff${story('SIDE-bom')}`],
      [highlights, json, story('SIDE-anonymous')],
      [highlights, { ...json, authorization: 'Bearer READER' }, story('SIDE-reader')],
      [highlights, { ...json, authorization: 'Bearer agt_not_a_real_token' }, story('SIDE-forged')],
      ['/api/test/legacy-post', json, '{"note":"hello"}'],
      ['/api/test/old-post', json, '{"note":"far too long for the twenty characters"}'],
      ['/api/test/legacy-post', json, '{"note":'],
    ];
    const answered = () => frontDoorOf(apps.direct.app)?.answered ?? 0;
    const before = answered();
    const answers: Wire[] = [];
    for (const [index, [path, headers, body]] of cases.entries()) {
      const views = [];
      for (const side of sides) {
        const named = (text: string) =>
          text
            .replaceAll('SIDE', side)
            .replace('WRITER', tokens[side].writer)
            .replace('READER', tokens[side].reader);
        const sent = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, named(value)]));
        sent['x-request-id'] = `post-${index}`;
        sent['x-forwarded-for'] = `192.0.2.${index + 1}`;
        const wire = await send(apps[side].baseUrl, 'POST', path, sent, named(body));
        if (side === 'direct') answers.push(wire);
        views.push(bySide(wire, apps[side].baseUrl, side));
      }
      assert.deepEqual(views[0], views[1], `${path} ${body}`);
    }
    assert.equal(answered() - before, cases.length);
    // The cases reach what they are about: writes, a replay, refusals of the story, the JSON, the caller.
    assert.deepEqual(
      answers.map((answer) => answer.status),
      [
        202, 202, 202, 202, 202, 202, 400, 400, 400, 400, 400, 400, 400, 400, 202, 401, 403, 401, 200, 400,
        400,
      ],
    );
    assert.equal(answers[4].headers['idempotent-replayed'], 'true');
    assert.equal(JSON.parse(answers[7].text).error, 'invalid_json');
    assert.equal(JSON.parse(answers[8].text).error, 'invalid_json', 'prototype poisoning is refused');
    assert.equal(answers[18].headers.deprecation, '@1785542400');
    assert.equal(
      answers[20].headers.deprecation,
      undefined,
      'a refused body is answered before the operation',
    );
    // What the writes stored: each side's stories, under its own member.
    for (const side of sides) {
      const stored = await apps.direct.deps.db
        .selectFrom('highlights')
        .innerJoin('members', 'members.id', 'highlights.member_id')
        .select(['highlights.id', 'highlights.story', 'members.name'])
        .where('highlights.id', 'like', `${side}-%`)
        .orderBy('highlights.id')
        .execute();
      assert.deepEqual(
        stored.map((row) => [row.id, row.name, JSON.parse(row.story).dek ?? null]),
        [
          [`${side}-bom`, `Ada ${side}`, null],
          [`${side}-charset`, `Ada ${side}`, null],
          [`${side}-first`, `Ada ${side}`, 'Refreshed.'],
          [`${side}-keyed`, `Ada ${side}`, null],
          [`${side}-wrapped`, `Ada ${side}`, null],
        ],
      );
    }
  });

  test('what it cannot read as Fastify would goes to Fastify', async () => {
    const refused = story('not a slug');
    const cases: [string, string, Record<string, string>, string?][] = [
      ['POST', `${highlights}?x=1`, json, refused],
      ['POST', `${highlights}/`, json, refused],
      ['POST', highlights, { 'content-type': 'application/json;charset=utf-8' }, refused],
      ['POST', highlights, { 'content-type': 'Application/JSON' }, refused],
      ['POST', highlights, { 'content-type': 'text/plain' }, refused],
      ['POST', highlights, {}, refused],
      ['POST', highlights, { ...json, 'content-encoding': 'gzip' }, refused],
      ['POST', highlights, { ...json, 'transfer-encoding': 'chunked' }, refused],
      ['POST', highlights, json, story('too-large', { dek: 'x'.repeat(300 * 1024) })],
      ['POST', highlights, json, ''],
      ['POST', '/api/events/upcoming', json, '{}'],
      ['DELETE', '/api/tier/request', json, '{}'],
    ];
    await assertFallsThrough(apps.direct, apps.routed, cases);
  });
});
