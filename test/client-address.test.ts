// The client address behind a proxy: the right-most X-Forwarded-For entry that no trusted proxy
// added, read by one rule (Fastify's request.ip and the per-address connection cap), so a client
// that writes its own X-Forwarded-For never widens a per-IP limit.
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../src/config.ts';
import { clientAddress, compileProxyTrust, type TrustedProxies } from '../src/http/client.ts';
import { startTestApp, type TestApp } from './support/app.ts';

interface Answer {
  status: number;
  text: string;
}

/** One request to 127.0.0.1:`port`, sent from `localAddress` (any loopback address). */
function send(
  port: number,
  localAddress: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const sent = httpRequest(
      { host: '127.0.0.1', port, localAddress, method, path, headers, agent: false },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => {
          text += chunk;
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
      },
    );
    sent.on('error', reject);
    sent.end(body);
  });
}

/**
 * A reverse proxy as load balancers and CDNs are: it appends its peer's address to whatever
 * X-Forwarded-For the client sent, and reaches the app from 127.0.0.1.
 */
function appendingProxy(appPort: number): Promise<Server> {
  const proxy = createServer((incoming, outgoing) => {
    const peer = incoming.socket.remoteAddress ?? '';
    const sent = incoming.headers['x-forwarded-for'];
    const headers = { ...incoming.headers, 'x-forwarded-for': sent ? `${sent}, ${peer}` : peer };
    const upstream = httpRequest(
      {
        host: '127.0.0.1',
        port: appPort,
        localAddress: '127.0.0.1',
        method: incoming.method,
        path: incoming.url,
        headers,
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    upstream.on('error', () => outgoing.destroy());
    incoming.pipe(upstream);
  });
  return new Promise((resolve) => proxy.listen(0, '127.0.0.1', () => resolve(proxy)));
}

const portOf = (server: Server) => (server.address() as AddressInfo).port;
const spoofed = () => `198.51.100.${randomInt(1, 255)}, 203.0.113.${randomInt(1, 255)}`;

test('TRUST_PROXY reads addresses and CIDRs, a hop count, true as one hop, and refuses the rest', () => {
  const read = (value: string) => loadConfig({ TRUST_PROXY: value }).trustProxy;
  assert.deepEqual(loadConfig({}).trustProxy, { hops: 0 });
  assert.deepEqual(read('false'), { hops: 0 });
  assert.deepEqual(read('true'), { hops: 1 });
  assert.deepEqual(read('2'), { hops: 2 });
  assert.deepEqual(read('10.0.0.0/8, 2001:db8::/32,loopback'), {
    addresses: ['10.0.0.0/8', '2001:db8::/32', 'loopback'],
  });
  assert.throws(() => read('10.0.0.300'), /TRUST_PROXY must be addresses or CIDRs.*\(got "10.0.0.300"\)/);
  assert.throws(() => read('everyone'), /TRUST_PROXY must be/);
});

describe('the client address from a chain', () => {
  let server: Server;
  let port: number;
  let trusted: TrustedProxies = { hops: 0 };
  before(async () => {
    // Answers what clientAddress reads from a real request, under the rule the test sets.
    server = createServer((request: IncomingMessage, response) =>
      response.end(clientAddress(request, compileProxyTrust(trusted))),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = portOf(server);
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const from = async (rule: TrustedProxies, local: string, forwarded?: string) => {
    trusted = rule;
    const headers: Record<string, string> = forwarded === undefined ? {} : { 'x-forwarded-for': forwarded };
    return (await send(port, local, 'GET', '/', headers)).text;
  };

  test('a trusted proxy appending to `spoofed, real` yields real', async () => {
    const proxy = { addresses: ['127.0.0.1'] };
    assert.equal(await from(proxy, '127.0.0.1', '6.6.6.6, 203.0.113.9'), '203.0.113.9');
    assert.equal(await from({ hops: 1 }, '127.0.0.1', '6.6.6.6, 203.0.113.9'), '203.0.113.9');
    // Two proxies, both trusted (a CDN's range and the load balancer's): the entry before them.
    const both = { addresses: ['127.0.0.1', '192.0.2.0/24'] };
    assert.equal(await from(both, '127.0.0.1', '6.6.6.6, 203.0.113.9, 192.0.2.7'), '203.0.113.9');
    assert.equal(await from({ hops: 2 }, '127.0.0.1', '6.6.6.6, 203.0.113.9, 192.0.2.7'), '203.0.113.9');
  });

  test('a peer that is not a trusted proxy is the client, whatever it writes', async () => {
    assert.equal(await from({ addresses: ['127.0.0.1'] }, '127.0.0.2', '203.0.113.9'), '127.0.0.2');
    assert.equal(await from({ hops: 0 }, '127.0.0.1', '203.0.113.9'), '127.0.0.1');
    assert.equal(await from({ addresses: ['127.0.0.1'] }, '127.0.0.1'), '127.0.0.1');
  });
});

describe('per-IP limits hold against a spoofed X-Forwarded-For', () => {
  let t: TestApp;
  let proxy: Server;
  before(async () => {
    t = await startTestApp({
      limits: { anonymousPerMinute: 5, feedbackPerHour: 3 },
      config: { trustProxy: { addresses: ['127.0.0.1'] } },
      extend: (app) => app.get('/test/client-ip', async (request) => request.ip),
    });
    proxy = await appendingProxy(Number(new URL(t.baseUrl).port));
  });
  after(async () => {
    await new Promise<void>((resolve) => proxy.close(() => resolve()));
    await t?.close();
  });

  test('through the proxy: a random header on every request still meets the anonymous limit', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      const answer = await send(portOf(proxy), '127.0.0.2', 'GET', '/api/events/upcoming', {
        'x-forwarded-for': spoofed(),
      });
      statuses.push(answer.status);
    }
    assert.deepEqual(statuses, [...Array(5).fill(200), ...Array(7).fill(429)]);
    // Fastify's request.ip reads the same rule: the proxy's peer, not the header's words.
    const seen = await send(portOf(proxy), '127.0.0.3', 'GET', '/test/client-ip', {
      'x-forwarded-for': spoofed(),
    });
    assert.equal(seen.text, '127.0.0.3');
  });

  test('straight to the app from an untrusted address: the header does not count', async () => {
    const port = Number(new URL(t.baseUrl).port);
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const answer = await send(
        port,
        '127.0.0.4',
        'POST',
        '/api/agent/feedback',
        { 'content-type': 'application/json', 'x-forwarded-for': spoofed() },
        JSON.stringify({ message: `spoofed ${i}` }),
      );
      statuses.push(answer.status);
    }
    assert.deepEqual(statuses, [...Array(3).fill(201), ...Array(5).fill(429)]);
  });
});

describe('with no proxy trusted (the default), the socket peer is the client', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({
      limits: { anonymousPerMinute: 3 },
      extend: (app) => app.get('/test/client-ip', async (request) => request.ip),
    });
  });
  after(async () => {
    await t?.close();
  });

  test('X-Forwarded-For changes neither request.ip nor the per-IP limit', async () => {
    const port = Number(new URL(t.baseUrl).port);
    const seen = await send(port, '127.0.0.5', 'GET', '/test/client-ip', { 'x-forwarded-for': spoofed() });
    assert.equal(seen.text, '127.0.0.5');
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++)
      statuses.push(
        (await send(port, '127.0.0.6', 'GET', '/api/events/upcoming', { 'x-forwarded-for': spoofed() }))
          .status,
      );
    assert.deepEqual(statuses, [...Array(3).fill(200), ...Array(2).fill(429)]);
  });
});
