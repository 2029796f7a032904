import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { Config } from '../src/config.ts';
import { createSession, SESSION_COOKIE } from '../src/domain/auth/sessions.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { type ClientKey, newClientKey, signRequest } from './support/signer.ts';

const REFUSED = 'signature verification failed: ';

interface Answer {
  status: number;
  body: any;
}

/** A GET to the server at `port` carrying `host` as its Host header, as a client that dialled that name sends it. */
function getWithHost(
  port: number,
  host: string,
  path: string,
  headers: Record<string, string>,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const sent = httpRequest(
      { host: '127.0.0.1', port, path, method: 'GET', headers: { ...headers, host } },
      (response) => {
        let text = '';
        response.setEncoding('utf8').on('data', (chunk: string) => {
          text += chunk;
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    sent.on('error', reject);
    sent.end();
  });
}

/** A server with one enforced key, and a way to send it a GET signed for a URL of the client's choosing. */
async function signedServer(config: Partial<Config> = {}) {
  const t = await startTestApp({ config });
  const member = await t.member('core', 'Authority Tester');
  const token = await t.token(member, ['membership:read']);
  const rows = await t.deps.db.selectFrom('tokens').select(['id', 'prefix']).execute();
  const tokenId = (rows.find((row) => token.startsWith(row.prefix)) as { id: string }).id;
  const port = (t.app.server.address() as { port: number }).port;
  // Straight to the port: PUBLIC_URL may name a proxy that is not there.
  const post = (path: string, body: unknown) =>
    fetch(`http://127.0.0.1:${port}${path}`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const cookie = `${SESSION_COOKIE}=${await createSession(t.deps.db, t.clock, member.id)}`;
  const key: ClientKey = newClientKey();
  const bound = await post('/api/agent/keys/register', { token_id: tokenId, jwk: key.jwk });
  assert.equal(bound.status, 200, await bound.text());
  await post('/api/agent/keys/enforce-toggle', { token_id: tokenId, enforce: true });
  /** Signed for `signedUrl`, sent to this server with `host` as its Host header. */
  const send = async (signedUrl: string, host: string): Promise<Answer> => {
    const url = new URL(signedUrl);
    const signed = await signRequest(
      { method: 'GET', url: signedUrl, headers: { authorization: `Bearer ${token}` } },
      { key, created: new Date(t.clock.now()) },
    );
    return getWithHost(port, host, url.pathname + url.search, signed);
  };
  return { t, port, token, key, send };
}

describe('signed requests: @authority is the one the request was sent to, among the service’s names', () => {
  let server: Awaited<ReturnType<typeof signedServer>>;
  let t: TestApp;
  before(async () => {
    server = await signedServer();
    t = server.t;
  });
  after(() => t?.close());

  test('PUBLIC_URL on 127.0.0.1: signed for localhost, 127.0.0.1 or [::1] on its port, each passes', async () => {
    const { port, send } = server;
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`]) {
      const answer = await send(`http://${host}/api/activity/me?limit=2`, host);
      assert.equal(answer.status, 200, `${host}: ${JSON.stringify(answer.body)}`);
    }
  });

  test('the README’s address, as curl and fetch reach it: http://localhost:PORT', async () => {
    const { port, token, key } = server;
    const url = `http://localhost:${port}/api/agent/setup-check`;
    const headers = await signRequest(
      { method: 'GET', url, headers: { authorization: `Bearer ${token}` } },
      { key, created: new Date(t.clock.now()) },
    );
    const answer = await fetch(url, { headers });
    const body = await answer.json();
    assert.equal(body.ready, true, JSON.stringify(body));
  });

  test('signed for and sent to evil.example: refused, naming the authority expected and the one received', async () => {
    const { port, send } = server;
    const answer = await send(`http://evil.example:${port}/api/activity/me`, `evil.example:${port}`);
    assert.equal(answer.status, 401);
    assert.ok(answer.body.error.startsWith(`${REFUSED}the signature does not verify`), answer.body.error);
    assert.ok(answer.body.error.includes(`"127.0.0.1:${port}"`), answer.body.error);
    assert.ok(answer.body.error.includes(`"evil.example:${port}"`), answer.body.error);
    assert.equal(answer.body.expected_authority, `127.0.0.1:${port}`);
    assert.equal(answer.body.received_authority, `evil.example:${port}`);
    assert.ok(answer.body.message.includes(`http://127.0.0.1:${port}/api/activity/me`), answer.body.message);
  });

  test('a loopback name on another port is not this server: judged against PUBLIC_URL', async () => {
    const { port, send } = server;
    const other = `localhost:${port + 1}`;
    const answer = await send(`http://${other}/api/activity/me`, other);
    assert.equal(answer.status, 401);
    assert.equal(answer.body.expected_authority, `127.0.0.1:${port}`);
    assert.equal(answer.body.received_authority, other);
  });

  test('signed for evil.example, sent to this server: refused, naming the authority it was judged against', async () => {
    const { port, send } = server;
    const answer = await send(`http://evil.example:${port}/api/activity/me`, `127.0.0.1:${port}`);
    assert.equal(answer.status, 401);
    assert.equal(answer.body.expected_authority, `127.0.0.1:${port}`);
    assert.equal(answer.body.received_authority, `127.0.0.1:${port}`);
  });
});

describe('signed requests behind a proxy: PUBLIC_URL not on loopback', () => {
  let server: Awaited<ReturnType<typeof signedServer>>;
  before(async () => {
    // Sign-in mail needs a way out on a public address; nothing is sent here.
    server = await signedServer({
      publicUrl: 'https://agents.example.org',
      smtpUrl: 'smtp://127.0.0.1:2525',
    });
  });
  after(() => server?.t.close());

  test('signed for PUBLIC_URL, the Host rewritten by the proxy: passes', async () => {
    const answer = await server.send(
      'https://agents.example.org/api/activity/me',
      `127.0.0.1:${server.port}`,
    );
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
  });

  test('signed for the Host the proxy sends: refused, loopback names are not the service’s here', async () => {
    const host = `127.0.0.1:${server.port}`;
    const answer = await server.send(`http://${host}/api/activity/me`, host);
    assert.equal(answer.status, 401);
    assert.equal(answer.body.expected_authority, 'agents.example.org');
    assert.equal(answer.body.received_authority, host);
  });
});
