// The suite cannot reach the network (test/support/no-network.ts, loaded before every file):
// anything but loopback fails at once, loopback works.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { test } from 'node:test';
import pg from 'pg';

test('a request to a public host fails at once without leaving the machine; loopback answers', async () => {
  const started = Date.now();
  const refused = await fetch('http://example.com/').then(
    () => undefined,
    (error: Error & { cause?: { code?: string; message?: string } }) => error.cause,
  );
  assert.equal(refused?.code, 'ENETUNREACH');
  assert.match(refused?.message ?? '', /outbound network is blocked in tests: example\.com:80/);
  const literal = await fetch('https://93.184.215.14/').then(
    () => undefined,
    (error: Error & { cause?: { code?: string } }) => error.cause?.code,
  );
  assert.equal(literal, 'ENETUNREACH');
  const database = new pg.Client({ host: 'db.example.org', connectionTimeoutMillis: 2000 });
  await assert.rejects(database.connect(), /outbound network is blocked in tests/);
  assert.ok(Date.now() - started < 2000, 'failed at once');

  const server = createServer((_request, response) => response.end('here'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  try {
    assert.equal(await (await fetch(`http://127.0.0.1:${port}/`)).text(), 'here');
    assert.equal(await (await fetch(`http://localhost:${port}/`)).text(), 'here');
  } finally {
    server.closeAllConnections();
    server.close();
  }
});
