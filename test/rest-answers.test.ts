// What the REST routes send for a pipeline result: kept answers gzipped or as text, lengths in bytes,
// fresh request ids, the request logged without its query, and reads the pipeline answers at once.
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { PassThrough } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { acceptsGzip } from '../src/http/serialized-answers.ts';
import { runOperationNow } from '../src/operations/pipeline/run.ts';
import { OPERATIONS } from '../src/operations/registry.ts';
import type { Operation } from '../src/operations/types.ts';
import { callRequestFrom } from '../src/surfaces/rest.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { cacheEvent } from './support/community.ts';
import { freshDatabase, type TestDatabase } from './support/databases.ts';

interface Wire {
  raw: Buffer;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** One raw HTTP/1.1 request, so headers and body are seen exactly as sent. */
function send(baseUrl: string, method: string, path: string, headers: Record<string, string>) {
  return new Promise<Wire>((resolve, reject) => {
    const { hostname, port } = new URL(baseUrl);
    const options = { hostname, port, path, method, headers, agent: false };
    const outgoing = httpRequest(options, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const raw = Buffer.concat(chunks);
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          raw,
          text: raw.toString('latin1'),
        });
      });
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

describe('REST answers of kept reads', () => {
  let database: TestDatabase;
  let direct: TestApp;
  const log = new PassThrough();
  before(async () => {
    database = await freshDatabase('sqlite');
    direct = await startTestApp({
      database,
      logStream: log,
      config: { trustProxy: { addresses: ['127.0.0.1'] } },
    });
    await cacheEvent(direct, 'direct-read');
    // Eight events: the upcoming answer passes the size from which it is also kept gzipped.
    for (let i = 2; i <= 8; i++) await cacheEvent(direct, `read-${i}`, 24 * i);
  });
  after(async () => {
    await direct?.close();
    await database?.drop();
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

  test('the request is logged without its query string', async () => {
    const seen: Record<string, unknown>[] = [];
    log.on('data', (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n').filter(Boolean)) {
        const entry = JSON.parse(line);
        if (entry.reqId === 'logged') seen.push(entry);
      }
    });
    await send(direct.baseUrl, 'GET', '/api/events/upcoming?limit=1', {
      'x-request-id': 'logged',
      'x-forwarded-for': '198.51.100.11',
    });
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(
      seen.map((entry) => entry.msg),
      ['incoming request', 'request completed'],
    );
    assert.deepEqual(seen[0].req, { method: 'GET', path: '/api/events/upcoming', id: 'logged' });
    assert.equal(typeof seen[1].responseTime, 'number');
  });

  test('a cached answer of 1 KB or more goes gzipped to a client that accepts gzip', async () => {
    for (const [app, label] of [[direct, 'rest']] as const) {
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

  test('a small cached answer sent as text counts its length in bytes', async () => {
    const name = 'Zoë Ōkubo 東京';
    const member = await direct.member('core', name);
    const wide = await direct.token(member, ['read:public']);
    for (const [app, label] of [[direct, 'rest']] as const) {
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
});

describe('a reused read', () => {
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
    // On the wire the at-once answer is the same body.
    const wire = await app.call('GET', `/api/events/get?url=${encodeURIComponent(upcomingUrl)}`);
    assert.equal(wire.status, 200);
    assert.deepEqual(wire.body, again.body);
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
