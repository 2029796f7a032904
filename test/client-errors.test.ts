// What node:http refuses before a request reaches the app (a body too slow, headers too large, bytes
// that are not HTTP) is answered in the same Error shape as every other refusal.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, test } from 'node:test';
import { ERROR_KINDS } from '../src/core/errors.ts';
import { startTestApp, type TestApp } from './support/app.ts';

let t: TestApp;

before(async () => {
  t = await startTestApp({
    config: {
      connections: {
        requestTimeoutMs: 300,
        headersTimeoutMs: 300,
        keepAliveTimeoutMs: 5000,
        maxPerAddress: 100,
      },
    },
  });
});
after(() => t.close());

/** Writes `bytes` on a new connection (the rest of the request never comes) and reads until it closes. */
function exchange(bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(t.baseUrl).port), '127.0.0.1', () => socket.write(bytes));
    let answer = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk) => {
      answer += chunk;
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(answer));
  });
}

function errorBodyOf(answer: string): Record<string, unknown> {
  const [head, body] = answer.split('\r\n\r\n');
  assert.match(head, /content-type: application\/json/i);
  const parsed = JSON.parse(body);
  assert.equal(typeof parsed.error, 'string');
  assert.ok((ERROR_KINDS as readonly string[]).includes(parsed.error_kind), parsed.error_kind);
  assert.equal(typeof parsed.message, 'string');
  return parsed;
}

test('a body that does not arrive in time: 408 request_timeout in the Error shape', async () => {
  const answer = await exchange(
    'POST /api/feedback HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"mess',
  );
  assert.match(answer, /^HTTP\/1\.1 408 /);
  assert.equal(errorBodyOf(answer).error, 'request_timeout');
});

test('headers larger than node accepts: 431 headers_too_large in the Error shape', async () => {
  const answer = await exchange(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
  assert.match(answer, /^HTTP\/1\.1 431 /);
  assert.equal(errorBodyOf(answer).error, 'headers_too_large');
});

test('bytes that are not HTTP: 400 bad_request in the Error shape', async () => {
  const answer = await exchange('NOT HTTP AT ALL\r\n\r\n');
  assert.match(answer, /^HTTP\/1\.1 400 /);
  assert.equal(errorBodyOf(answer).error, 'bad_request');
});
