// Cross-origin access over plain HTTP (src/http/cors.ts): the public documents for any origin, the
// API for the origins CORS_ALLOWED_ORIGINS lists, with the bearer as the only credential; and the
// MCP call llms.txt and the reference page print, run as printed.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { loadConfig } from '../src/config.ts';
import { createSession, SESSION_COOKIE } from '../src/domain/auth/sessions.ts';
import { startTestApp, type TestApp } from './support/app.ts';

const ALLOWED = 'https://agent.example';
const FOREIGN = 'https://evil.example';
const MCP_HEADERS = {
  accept: 'application/json, text/event-stream',
  'content-type': 'application/json',
  'mcp-protocol-version': '2025-11-25',
};
const LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
const MEMBERSHIP = JSON.stringify({
  jsonrpc: '2.0',
  id: 2,
  method: 'tools/call',
  params: { name: 'ic_get_my_membership', arguments: {} },
});
const PUBLIC_DOCUMENTS = [
  '/.well-known/ai-agent.json',
  '/.well-known/mcp.json',
  '/.well-known/agent-card.json',
  '/.well-known/agent.json',
  '/.well-known/oauth-authorization-server',
  '/.well-known/oauth-protected-resource/api/mcp',
  '/openapi.json',
  '/llms.txt',
  '/discovery/resources',
  '/newsletter/feed.json',
];

function preflight(t: TestApp, path: string, origin: string, method = 'POST', headers = 'authorization') {
  return fetch(t.baseUrl + path, {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': method,
      'access-control-request-headers': headers,
    },
  });
}

function listOf(value: string | null): string[] {
  return (value ?? '').split(',').map((name) => name.trim().toLowerCase());
}

describe('CORS_ALLOWED_ORIGINS', () => {
  test('reads origins as a browser sends them, and refuses anything else', () => {
    const read = (value: string) => loadConfig({ CORS_ALLOWED_ORIGINS: value }).corsOrigins;
    assert.deepEqual(loadConfig({}).corsOrigins, []);
    assert.deepEqual(read(' https://Agent.Example/ , http://localhost:5173,https://agent.example:443'), [
      'https://agent.example',
      'http://localhost:5173',
    ]);
    for (const bad of [
      '*',
      'agent.example',
      'https://agent.example/app',
      'ftp://agent.example',
      'https://a.example?x',
    ])
      assert.throws(() => read(bad), /CORS_ALLOWED_ORIGINS must be a comma-separated list of origins/, bad);
  });
});

describe('cross-origin access with origins listed', () => {
  let t: TestApp;
  let token: string;
  let cookie: string;
  before(async () => {
    t = await startTestApp({ config: { corsOrigins: [ALLOWED, 'http://localhost:5173'] } });
    const member = await t.member('member', 'Ada Example');
    token = await t.token(member, ['membership:read']);
    cookie = `${SESSION_COOKIE}=${await createSession(t.deps.db, t.clock, member.id)}`;
  });
  after(() => t?.close());

  test('a listed origin’s preflight is answered on REST, MCP and A2A, with the headers they read', async () => {
    for (const path of ['/api/agent/setup-check', '/api/mcp', '/api/a2a', '/api/no/such/operation']) {
      const asked =
        'authorization, content-type, mcp-protocol-version, mcp-method, mcp-name, mcp-param-region, idempotency-key, signature, signature-input, a2a-version';
      const response = await preflight(t, path, ALLOWED, 'POST', asked);
      assert.equal(response.status, 204, path);
      assert.equal(response.headers.get('access-control-allow-origin'), ALLOWED, path);
      assert.equal(response.headers.get('access-control-allow-credentials'), null, path);
      assert.ok(listOf(response.headers.get('vary')).includes('origin'), path);
      const methods = listOf(response.headers.get('access-control-allow-methods'));
      for (const method of ['get', 'post', 'delete'])
        assert.ok(methods.includes(method), `${path} ${method}`);
      const allowed = listOf(response.headers.get('access-control-allow-headers'));
      for (const name of asked.split(', ')) assert.ok(allowed.includes(name), `${path}: ${name}`);
      for (const name of ['mcp-session-id', 'signature-agent', 'content-digest', 'accept'])
        assert.ok(allowed.includes(name), `${path}: ${name}`);
      assert.ok(Number(response.headers.get('access-control-max-age')) > 0);
    }
    // A header the API does not read is not granted: the browser then refuses the request itself.
    const odd = await preflight(t, '/api/mcp', ALLOWED, 'POST', 'x-something-else');
    assert.ok(!listOf(odd.headers.get('access-control-allow-headers')).includes('x-something-else'));
  });

  test('an origin not listed keeps today’s refusal: no grant, a 401 preflight, MCP’s 403', async () => {
    const response = await preflight(t, '/api/mcp', FOREIGN);
    assert.equal(response.status, 401);
    assert.equal(response.headers.get('access-control-allow-origin'), null);
    await response.arrayBuffer();
    const call = await fetch(`${t.baseUrl}/api/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, origin: FOREIGN, authorization: `Bearer ${token}` },
      body: LIST,
    });
    assert.equal(call.status, 403);
    assert.equal(call.headers.get('access-control-allow-origin'), null);
    assert.match((await call.json()).error.message, /Origin https:\/\/evil\.example is not allowed/);
    const rest = await fetch(`${t.baseUrl}/api/agent/setup-check`, {
      headers: { origin: FOREIGN, authorization: `Bearer ${token}` },
    });
    await rest.arrayBuffer();
    assert.equal(rest.headers.get('access-control-allow-origin'), null);
    assert.ok(listOf(rest.headers.get('vary')).includes('origin'), 'the answer says it depends on Origin');
  });

  test('a listed origin’s bearer calls carry its origin, Vary and the exposed headers', async () => {
    const mcp = await fetch(`${t.baseUrl}/api/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, origin: ALLOWED, authorization: `Bearer ${token}` },
      body: MEMBERSHIP,
    });
    assert.equal(mcp.status, 200);
    assert.equal((await mcp.json()).result.structuredContent.display_name, 'Ada Example');
    const rest = await fetch(`${t.baseUrl}/api/agent/setup-check`, {
      headers: { origin: ALLOWED, authorization: `Bearer ${token}` },
    });
    assert.equal(rest.status, 200);
    await rest.arrayBuffer();
    const a2a = await fetch(`${t.baseUrl}/api/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: ALLOWED, authorization: `Bearer ${token}` },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tasks/send',
        params: { capability: 'ic_get_my_membership', arguments: {} },
      }),
    });
    assert.equal(a2a.status, 200);
    assert.match(await a2a.text(), /Ada Example/);
    const anonymous = await fetch(`${t.baseUrl}/api/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, origin: ALLOWED },
      body: MEMBERSHIP,
    });
    assert.equal(anonymous.status, 401);
    await anonymous.arrayBuffer();
    for (const [name, response] of Object.entries({ mcp, rest, a2a, anonymous })) {
      assert.equal(response.headers.get('access-control-allow-origin'), ALLOWED, name);
      assert.equal(response.headers.get('access-control-allow-credentials'), null, name);
      assert.ok(listOf(response.headers.get('vary')).includes('origin'), name);
      const exposed = listOf(response.headers.get('access-control-expose-headers'));
      for (const header of [
        'www-authenticate',
        'ratelimit',
        'retry-after',
        'mcp-protocol-version',
        'a2a-version',
      ])
        assert.ok(exposed.includes(header), `${name}: ${header}`);
    }
    assert.match(anonymous.headers.get('www-authenticate') ?? '', /resource_metadata=/);
  });

  test('a session cookie from a listed origin authenticates nothing; from our own pages it still does', async () => {
    const foreign = await fetch(`${t.baseUrl}/api/tier/me`, { headers: { origin: ALLOWED, cookie } });
    assert.equal(foreign.status, 401);
    assert.equal(foreign.headers.get('access-control-allow-credentials'), null);
    await foreign.arrayBuffer();
    const write = await fetch(`${t.baseUrl}/api/tier/request`, {
      method: 'POST',
      headers: { origin: ALLOWED, cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ tier: 'contributor' }),
    });
    assert.equal(write.status, 401);
    await write.arrayBuffer();
    const own = await fetch(`${t.baseUrl}/api/tier/me`, { headers: { origin: t.baseUrl, cookie } });
    assert.equal(own.status, 200);
    assert.equal(own.headers.get('access-control-allow-origin'), null);
    await own.arrayBuffer();
    const plain = await fetch(`${t.baseUrl}/api/tier/me`, { headers: { cookie } });
    assert.equal(plain.status, 200);
    await plain.arrayBuffer();
  });

  test('pages grant no origin and keep their own headers', async () => {
    for (const path of ['/', '/docs', '/signin', '/signup-with-agent']) {
      const response = await fetch(t.baseUrl + path, { headers: { origin: ALLOWED }, redirect: 'manual' });
      await response.arrayBuffer();
      assert.equal(response.headers.get('access-control-allow-origin'), null, path);
      assert.match(response.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/, path);
    }
  });
});

describe('cross-origin access by default (no origin listed)', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t?.close());

  test('the public documents are readable from any origin, without credentials', async () => {
    for (const path of PUBLIC_DOCUMENTS) {
      const response = await fetch(t.baseUrl + path, { headers: { origin: FOREIGN } });
      assert.equal(response.status, 200, path);
      await response.arrayBuffer();
      assert.equal(response.headers.get('access-control-allow-origin'), '*', path);
      assert.equal(response.headers.get('access-control-allow-credentials'), null, path);
      const asked = await preflight(t, path, FOREIGN, 'GET', 'mcp-protocol-version');
      assert.equal(asked.status, 204, path);
      assert.equal(asked.headers.get('access-control-allow-origin'), '*', path);
    }
  });

  test('the API grants no origin and answers as before', async () => {
    const response = await preflight(t, '/api/mcp', ALLOWED);
    assert.equal(response.status, 401);
    await response.arrayBuffer();
    const call = await fetch(`${t.baseUrl}/api/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, origin: ALLOWED },
      body: LIST,
    });
    assert.equal(call.status, 403);
    for (const name of ['access-control-allow-origin', 'access-control-expose-headers', 'vary'])
      assert.equal(call.headers.get(name), null, name);
  });

  test('MCP with Accept */* (curl’s default) is answered; without event-stream, the 406 says what to send', async () => {
    const any = await fetch(`${t.baseUrl}/api/mcp`, {
      method: 'POST',
      headers: { accept: '*/*', 'content-type': 'application/json' },
      body: LIST,
    });
    assert.equal(any.status, 200);
    assert.ok((await any.json()).result.tools.length > 5);
    const none = await fetch(`${t.baseUrl}/api/mcp`, {
      method: 'POST',
      headers: { accept: 'text/html, */*;q=0', 'content-type': 'application/json' },
      body: LIST,
    });
    assert.equal(none.status, 406);
    assert.match((await none.json()).error.message, /application\/json and text\/event-stream/);
  });

  test('the MCP call llms.txt and /docs print works as printed', async () => {
    const llms = await (await fetch(`${t.baseUrl}/llms.txt`)).text();
    const command = llms.split('\n').find((line) => line.startsWith('curl '));
    assert.ok(command, 'llms.txt shows a curl command');
    const docs = await (await fetch(`${t.baseUrl}/docs`)).text();
    const shown = /<section id="mcp-example"[\s\S]*?<pre><code[^>]*>([^<]*)<\/code><\/pre>/.exec(docs)?.[1];
    const unescaped = shown
      ?.replace(/&#39;/g, "'")
      .replace(/&quot;/g, '"')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&');
    assert.equal(unescaped, command, 'the reference page shows the same command');
    // The command's equivalent, read from it word by word: URL, -X, each -H, -d, and curl's own Accept
    // where the command sets none.
    const words = [...command.matchAll(/'([^']*)'|(\S+)/g)].map((match) => match[1] ?? match[2]);
    const headers: Record<string, string> = { accept: '*/*', 'user-agent': 'curl/8' };
    let url = '';
    let method = 'GET';
    let body: string | undefined;
    for (let i = 1; i < words.length; i++) {
      const word = words[i];
      if (word === '-X') method = words[++i];
      else if (word === '-H') {
        const [name, ...value] = words[++i].split(':');
        headers[name.trim().toLowerCase()] = value.join(':').trim();
      } else if (word === '-d') {
        body = words[++i];
        if (method === 'GET') method = 'POST';
      } else if (!word.startsWith('-')) url = word;
    }
    assert.equal(url, `${t.baseUrl}/api/mcp`);
    const response = await fetch(url, { method, headers, body });
    assert.equal(response.status, 200);
    const answer = await response.json();
    assert.ok(answer.result.tools.some((tool: { name: string }) => tool.name === 'ic_get_my_membership'));
    // And the command itself, through a shell, where curl is installed.
    if (existsSync('/usr/bin/curl')) {
      const { stdout } = await promisify(execFile)('/bin/sh', ['-c', command], { timeout: 10_000 });
      assert.ok(JSON.parse(stdout).result.tools.length > 5);
    }
  });
});
