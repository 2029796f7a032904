// Every outbound request has a deadline, a body cap and a redirect limit; corpus URLs refuse
// loopback, private and link-local addresses unless the operator allows them.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { OutboundError, outboundFetch } from '../src/outbound.ts';
import { freshDatabase } from './support/databases.ts';
import { killAllChildren, runCli } from './support/processes.ts';

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

describe('outbound requests', () => {
  let server: Server;
  let base: string;
  let hits = 0;
  const routes = new Map<string, Handler>();
  before(async () => {
    server = createServer((request, response) => {
      hits++;
      const route = routes.get(new URL(request.url ?? '/', 'http://x').pathname);
      if (route) return route(request, response);
      response.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    routes.set('/doc', (_q, s) =>
      s.writeHead(200, { 'content-type': 'text/plain' }).end('Fjords are drowned glacial valleys.'),
    );
    routes.set('/big', (_q, s) => {
      s.writeHead(200);
      const chunk = Buffer.alloc(64 * 1024, 97);
      for (let i = 0; i < 40; i++) s.write(chunk);
      s.end();
    });
    routes.set('/silent', () => {});
    routes.set('/loop', (_q, s) => s.writeHead(302, { location: '/loop' }).end());
    routes.set('/echo-auth', (q, s) => s.writeHead(200).end(q.headers.authorization ?? 'none'));
    for (let i = 0; i < 6; i++)
      routes.set(`/hop${i}`, (_q, s) => s.writeHead(301, { location: `/hop${i + 1}` }).end());
    routes.set('/hop6', (_q, s) => s.writeHead(200).end('arrived'));
  });
  after(async () => {
    await killAllChildren();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const allowed = { timeoutMs: 2000, maxBytes: 1024 * 1024 };
  const kindOf = async (promise: Promise<unknown>) => {
    try {
      await promise;
      return 'ok';
    } catch (error) {
      assert.ok(error instanceof OutboundError, String(error));
      return error.kind;
    }
  };

  test('loopback, private and link-local addresses are refused before any connection when not allowed', async () => {
    const port = new URL(base).port;
    const before = hits;
    for (const target of [
      `${base}/doc`,
      `http://localhost:${port}/doc`,
      `http://[::1]:${port}/doc`,
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.1/',
      'http://192.168.1.1/',
      `http://127.1:${port}/doc`,
    ]) {
      assert.equal(
        await kindOf(outboundFetch(target, {}, { ...allowed, privateAddresses: false })),
        'private_address',
        target,
      );
    }
    assert.equal(hits, before, 'the server was never reached');
  });

  test('allowed: the body arrives; a body over the cap, a silent server and a redirect loop are refused', async () => {
    const ok = await outboundFetch(`${base}/doc`, {}, allowed);
    assert.equal(ok.status, 200);
    assert.equal(await ok.text(), 'Fjords are drowned glacial valleys.');
    assert.equal(await kindOf(outboundFetch(`${base}/big`, {}, allowed)), 'too_large');
    const started = Date.now();
    assert.equal(
      await kindOf(outboundFetch(`${base}/silent`, {}, { ...allowed, timeoutMs: 300 })),
      'timeout',
    );
    assert.ok(Date.now() - started < 2000, 'gave up at the deadline');
    assert.equal(await kindOf(outboundFetch(`${base}/loop`, {}, allowed)), 'too_many_redirects');
    assert.equal(await kindOf(outboundFetch(`${base}/hop0`, {}, allowed)), 'too_many_redirects', 'six hops');
    const five = await outboundFetch(`${base}/hop1`, {}, allowed);
    assert.equal(await five.text(), 'arrived', 'five hops are followed');
  });

  test('credentials are not carried to another origin by a redirect', async () => {
    const port = new URL(base).port;
    routes.set('/away', (_q, s) =>
      s.writeHead(302, { location: `http://localhost:${port}/echo-auth` }).end(),
    );
    routes.set('/here', (_q, s) => s.writeHead(302, { location: '/echo-auth' }).end());
    const init = { headers: { Authorization: 'Bearer secret' } };
    assert.equal(await (await outboundFetch(`${base}/here`, init, allowed)).text(), 'Bearer secret');
    assert.equal(await (await outboundFetch(`${base}/away`, init, allowed)).text(), 'none');
  });

  test('`corpus add` refuses a URL on this machine unless CORPUS_ALLOW_PRIVATE_URLS is set', async () => {
    const database = await freshDatabase('sqlite');
    try {
      const before = hits;
      const refused = await runCli(database.url, [
        'corpus',
        'add',
        `${base}/doc`,
        '--source',
        'book',
        '--json',
      ]);
      assert.equal(refused.code, 1, refused.stderr);
      const report = JSON.parse(refused.stdout);
      assert.equal(report.documents[0].status, 'failed');
      assert.match(report.documents[0].error, /loopback, private or link-local/);
      assert.equal(hits, before, 'nothing was fetched');

      const allowedRun = await runCli(
        database.url,
        ['corpus', 'add', `${base}/doc`, '--source', 'book', '--json'],
        {
          env: { CORPUS_ALLOW_PRIVATE_URLS: 'true' },
        },
      );
      assert.equal(allowedRun.code, 0, allowedRun.stderr);
      assert.equal(JSON.parse(allowedRun.stdout).documents[0].status, 'added');
    } finally {
      await database.drop();
    }
  });
});
