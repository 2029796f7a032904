// A browser agent on another origin, in real Chromium: a page served by a second small HTTP server
// calls REST, MCP and A2A with a bearer. From the origin CORS_ALLOWED_ORIGINS lists it can; from
// another (the same server under a second host name) the browser refuses; the public documents
// are readable from both.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createSession, SESSION_COOKIE } from '../src/domain/auth/sessions.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { launchChromium, skipWithoutChromium } from './support/chromium.ts';

interface Outcome {
  status?: number;
  body?: string;
  headers?: Record<string, string | null>;
  /** The browser refused the request (a CORS failure is a TypeError, with no status). */
  refused?: string;
}

interface Call {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  credentials?: RequestCredentials;
  /** Answer headers the page tries to read (only exposed ones are visible to it). */
  read?: string[];
}

/** A fetch made by the page itself, so the browser's CORS rules decide what it sees. */
function fetchFrom(page: Page, call: Call): Promise<Outcome> {
  return page.evaluate(async ({ url, method, headers, body, credentials, read }) => {
    try {
      const response = await fetch(url, { method, headers, body, credentials, mode: 'cors' });
      const seen: Record<string, string | null> = {};
      for (const name of read ?? []) seen[name] = response.headers.get(name);
      return { status: response.status, body: await response.text(), headers: seen };
    } catch (error) {
      return { refused: String(error) };
    }
  }, call);
}

const MCP_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-11-25',
};
const membershipCall = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'ic_get_my_membership', arguments: {} },
});
const a2aCall = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tasks/send',
  params: { capability: 'ic_get_my_membership', arguments: {} },
});

describe('a browser agent on another origin', { skip: skipWithoutChromium }, () => {
  let pages: Server;
  let t: TestApp;
  let browser: Browser;
  let context: BrowserContext;
  let allowed: Page;
  let foreign: Page;
  let token: string;
  let port: number;

  before(async () => {
    // The agent's own site: one page, on a port of its own.
    pages = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end('<!doctype html><html lang="en"><title>A browser agent</title><p>agent</p></html>');
    });
    await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
    port = (pages.address() as AddressInfo).port;
    // 127.0.0.1 and localhost are two origins on the same server: one listed, one not.
    t = await startTestApp({ config: { corsOrigins: [`http://127.0.0.1:${port}`] } });
    const member = await t.member('member', 'Ada Example');
    token = await t.token(member, ['membership:read']);
    browser = await launchChromium();
    context = await browser.newContext();
    // The member is signed in to the service in this browser too: the cookie must not help the agent.
    const session = await createSession(t.deps.db, t.clock, member.id);
    await context.addCookies([{ name: SESSION_COOKIE, value: session, url: t.baseUrl }]);
    allowed = await context.newPage();
    await allowed.goto(`http://127.0.0.1:${port}/`);
    foreign = await context.newPage();
    await foreign.goto(`http://localhost:${port}/`);
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    await new Promise((resolve) => pages?.close(resolve));
  });

  const bearer = () => ({ authorization: `Bearer ${token}` });
  const rest = (): Call => ({
    url: `${t.baseUrl}/api/agent/setup-check`,
    headers: bearer(),
    read: ['ratelimit', 'x-request-id'],
  });
  const mcp = (withToken = true): Call => ({
    url: `${t.baseUrl}/api/mcp`,
    method: 'POST',
    headers: { ...MCP_HEADERS, ...(withToken ? bearer() : {}) },
    body: membershipCall,
    read: ['mcp-protocol-version', 'ratelimit', 'www-authenticate'],
  });
  const a2a = (): Call => ({
    url: `${t.baseUrl}/api/a2a`,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...bearer() },
    body: a2aCall,
    read: ['ratelimit'],
  });

  test('from the listed origin: REST, MCP and A2A answer the bearer, with their headers readable', async () => {
    const restAnswer = await fetchFrom(allowed, rest());
    assert.equal(restAnswer.refused, undefined);
    assert.equal(restAnswer.status, 200);
    assert.ok(restAnswer.headers?.ratelimit, 'RateLimit is exposed');
    assert.ok(restAnswer.headers?.['x-request-id']);

    const mcpAnswer = await fetchFrom(allowed, mcp());
    assert.equal(mcpAnswer.refused, undefined);
    assert.equal(mcpAnswer.status, 200);
    assert.equal(JSON.parse(mcpAnswer.body ?? '').result.structuredContent.display_name, 'Ada Example');
    assert.equal(mcpAnswer.headers?.['mcp-protocol-version'], '2025-11-25');

    const anonymous = await fetchFrom(allowed, mcp(false));
    assert.equal(anonymous.status, 401);
    assert.match(
      anonymous.headers?.['www-authenticate'] ?? '',
      /resource_metadata=/,
      'the challenge is readable',
    );

    const a2aAnswer = await fetchFrom(allowed, a2a());
    assert.equal(a2aAnswer.refused, undefined);
    assert.equal(a2aAnswer.status, 200);
    assert.match(a2aAnswer.body ?? '', /Ada Example/);
  });

  test('from the listed origin: the session cookie of the same browser buys nothing', async () => {
    // Sent with the cookie, the answer is withheld by the browser (no Allow-Credentials)...
    const withCookie = await fetchFrom(allowed, { url: `${t.baseUrl}/api/tier/me`, credentials: 'include' });
    assert.match(withCookie.refused ?? '', /TypeError/);
    // ...and without it the API sees an anonymous call.
    const without = await fetchFrom(allowed, { url: `${t.baseUrl}/api/tier/me`, credentials: 'omit' });
    assert.equal(without.status, 401);
  });

  test('from an origin not listed: the browser refuses REST, MCP and A2A', async () => {
    for (const [name, call] of Object.entries({ rest: rest(), mcp: mcp(), a2a: a2a() })) {
      const answer = await fetchFrom(foreign, call);
      assert.match(answer.refused ?? `answered ${answer.status}`, /TypeError/, name);
    }
  });

  test('from either origin: the public documents are readable', async () => {
    for (const page of [allowed, foreign]) {
      for (const path of [
        '/.well-known/mcp.json',
        '/.well-known/agent-card.json',
        '/openapi.json',
        '/llms.txt',
      ]) {
        const answer = await fetchFrom(page, { url: t.baseUrl + path });
        assert.equal(answer.refused, undefined, `${page.url()} ${path}`);
        assert.equal(answer.status, 200, path);
      }
      // An MCP host reads the OAuth metadata with its protocol header, which takes a preflight.
      const metadata = await fetchFrom(page, {
        url: `${t.baseUrl}/.well-known/oauth-protected-resource/api/mcp`,
        headers: { 'mcp-protocol-version': '2025-11-25' },
      });
      assert.equal(metadata.status, 200);
    }
  });
});
