import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { rateKeyForIp } from '../src/http/client.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';
import { waitUntil } from './support/wait.ts';

// A client that sends a request and goes away before the answer is a client-side condition: the
// server finishes or drops the request quietly. Node no longer knows the socket's address then
// (request.ip is undefined), which once made every REST handler throw in rateKeyForIp, logged at
// error level.

const REQUESTS = [
  // A body and no length header (the request the fuzzer found).
  'DELETE /api/tier/request HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\r\n{"a":1}',
  'DELETE /api/tier/request HTTP/1.1\r\nHost: x\r\n\r\n{"a":1}',
  'POST /api/agent/feedback HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\r\n{"message":"x"}',
  // A body cut short.
  'POST /api/agent/feedback HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"m',
  'POST /api/a2a HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"jso\r\n',
  'POST /api/mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 500\r\n\r\n{"jsonrpc"',
  'POST /api/a2a HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\r\n{"jsonrpc":"2.0","id":1,"method":"tasks/send","params":{"capability":"ic_health","arguments":{}}}',
  'GET /api/events/upcoming HTTP/1.1\r\nHost: x\r\n\r\n',
];

/** Writes a raw request and leaves at once: half the time with a FIN, half the time with a reset. */
function sendAndLeave(port: number, raw: string, reset: boolean): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(raw);
      if (reset) socket.resetAndDestroy();
      else socket.end();
      socket.destroy();
      resolve();
    });
    socket.on('error', () => resolve());
  });
}

test('a request without a client address is keyed as an unknown client', () => {
  assert.equal(rateKeyForIp(undefined), 'unknown');
  assert.equal(rateKeyForIp(''), 'unknown');
  assert.equal(rateKeyForIp('::ffff:10.0.0.1'), '10.0.0.1');
});

for (const engine of engines) {
  describe(`a client that disconnects early (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    const lines: string[] = [];
    /** Requests whose handling is over: Fastify's reached onSend (handler or error handler done). */
    const answered = new Set<string>();
    before(async () => {
      const logStream = new Writable({
        write(chunk, _encoding, done) {
          lines.push(...String(chunk).split('\n').filter(Boolean));
          done();
        },
      });
      t = await startTestApp({
        engine: engine.name,
        logStream,
        extend: (app) =>
          app.addHook('onSend', (request, _reply, payload, done) => {
            answered.add(request.id);
            done(null, payload);
          }),
      });
    });
    after(async () => {
      await t?.close();
    });

    test('logs no line at error level, and the server keeps answering', async () => {
      const port = Number(new URL(t.baseUrl).port);
      for (let round = 0; round < 10; round++) {
        for (const raw of REQUESTS) await sendAndLeave(port, raw, round % 2 === 1);
      }
      // The server finishes what the clients left behind: every request it began (its 'incoming
      // request' line) has been answered, by Fastify (onSend) or by the door before Fastify (its
      // 'request completed' line), whether or not anyone was left to read the answer, or, where the
      // door was still reading the body when the client left, dropped (its 'request aborted' line).
      const entries = () =>
        lines.map((line) => JSON.parse(line) as { level: number; msg: string; reqId?: string });
      await waitUntil(() => {
        const logged = entries();
        const completed = new Set(
          logged
            .filter(
              (e) => e.msg === 'request completed' || e.msg === 'request aborted before its body arrived',
            )
            .map((e) => e.reqId),
        );
        const begun = logged.filter((e) => e.msg === 'incoming request').map((e) => e.reqId!);
        return (
          begun.length === REQUESTS.length * 10 && begun.every((id) => answered.has(id) || completed.has(id))
        );
      }, 'the server to answer every request the clients left');
      const errorLines = entries().filter((entry) => entry.level >= 50);
      assert.deepEqual(errorLines, []);
      const health = await t.call('GET', '/api/events/upcoming');
      assert.equal(health.status, 200, health.text);
      assert.ok(Array.isArray(health.body.events), health.text);
    });
  });
}
