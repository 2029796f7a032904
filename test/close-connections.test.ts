// Closing the app ends every connection that carries no request in flight: the idle keep-alive ones,
// and the ones that never sent a request (a client's spare connection, opened ahead of a request it
// never sends), which node does not count as idle and once kept the close waiting until the client
// dropped them. A real app on a real port, with real sockets.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { test } from 'node:test';
import { startTestApp } from './support/app.ts';

async function openSocket(port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  return socket;
}

test('a connection that never sent a request does not hold the close, and is ended by it', async () => {
  const t = await startTestApp({ engine: 'sqlite' });
  const port = Number(new URL(t.baseUrl).port);
  const silent = await openSocket(port);
  // One that answered a request and waits on keep-alive, beside it.
  const used = await openSocket(port);
  used.write('GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n');
  await once(used, 'data');
  // Let the server see the silent one before it closes.
  await new Promise((resolve) => setTimeout(resolve, 50));
  const silentClosed = once(silent, 'close');
  const usedClosed = once(used, 'close');
  const started = performance.now();
  await t.close();
  const took = performance.now() - started;
  await Promise.all([silentClosed, usedClosed]);
  assert.ok(took < 2000, `the close took ${took.toFixed(0)} ms`);
});

test('a request in progress at the close is still answered', async () => {
  const t = await startTestApp({ engine: 'sqlite' });
  const port = Number(new URL(t.baseUrl).port);
  const socket = await openSocket(port);
  let answer = '';
  socket.on('data', (chunk) => {
    answer += chunk;
  });
  // The head is complete, the body not yet: the request is in progress when the close begins.
  socket.write(
    'POST /api/mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n' +
      'accept: application/json, text/event-stream\r\ncontent-length: 2\r\n\r\n{',
  );
  await new Promise((resolve) => setTimeout(resolve, 50));
  const closing = t.close();
  socket.end('}');
  await closing;
  await once(socket, 'close');
  assert.match(answer, /^HTTP\/1\.1 \d{3} /);
});
