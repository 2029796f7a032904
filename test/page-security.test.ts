import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
import { createSession, SESSION_COOKIE } from '../src/domain/auth/sessions.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { appRoutes } from './support/app-routes.ts';
import { outboxPath } from './support/browser.ts';
import { CHROMIUM, skipWithoutChromium } from './support/chromium.ts';

/** What every text/html answer must carry. */
function assertPageHeaders(headers: Headers, what: string): void {
  const csp = headers.get('content-security-policy') ?? '';
  const directives = new Map(
    csp
      .split(';')
      .map((part) => part.trim().split(/\s+/))
      .filter((words) => words[0])
      .map(([name, ...values]) => [name, values]),
  );
  assert.deepEqual(directives.get('frame-ancestors'), ["'none'"], `${what}: frame-ancestors`);
  assert.deepEqual(directives.get('default-src'), ["'none'"], `${what}: default-src`);
  assert.deepEqual(directives.get('base-uri'), ["'none'"], `${what}: base-uri`);
  assert.deepEqual(directives.get('object-src'), ["'none'"], `${what}: object-src`);
  assert.equal(directives.get('form-action')?.[0], "'self'", `${what}: form-action`);
  for (const name of ['script-src', 'style-src'])
    assert.deepEqual(
      directives.get(name),
      ["'self'"],
      `${what}: ${name} allows our own files only, no inline code`,
    );
  assert.equal(headers.get('x-frame-options'), 'DENY', `${what}: X-Frame-Options`);
  assert.ok(
    ['no-referrer', 'same-origin', 'strict-origin-when-cross-origin'].includes(
      headers.get('referrer-policy') ?? '',
    ),
    `${what}: Referrer-Policy is ${headers.get('referrer-policy')}`,
  );
  assert.equal(headers.get('x-content-type-options'), 'nosniff', `${what}: X-Content-Type-Options`);
  assert.equal(headers.get('cross-origin-opener-policy'), 'same-origin', `${what}: COOP`);
  assert.match(headers.get('permissions-policy') ?? '', /camera=\(\)/, `${what}: Permissions-Policy`);
}

/** A path to request for a route: parameters get a value no record has (the page's 404). */
const concrete = (path: string) => path.replace(/:[A-Za-z_]+/g, 'no-such-thing');

describe('HTML answers carry the page security headers', () => {
  let t: TestApp;
  let operatorCookie: string;
  before(async () => {
    t = await startTestApp();
    const operator = await t.member('operator', 'Ola');
    operatorCookie = `${SESSION_COOKIE}=${await createSession(t.deps.db, t.clock, operator.id)}`;
  });
  after(() => t?.close());

  test('every GET route outside the API, signed in and not, as a page or a page-shaped error', async () => {
    const pages = new Set<string>();
    const routes = appRoutes(t.app).filter(
      (route) => route.methods.includes('GET') && !route.path.startsWith('/api/'),
    );
    assert.ok(routes.length > 20, `the app lists its routes (${routes.length})`);
    for (const cookie of [undefined, operatorCookie]) {
      for (const route of routes) {
        const path = concrete(route.path);
        const response = await fetch(t.baseUrl + path, {
          redirect: 'manual',
          headers: cookie ? { cookie } : {},
          signal: AbortSignal.timeout(10_000),
        });
        await response.arrayBuffer();
        if (!(response.headers.get('content-type') ?? '').startsWith('text/html')) continue;
        pages.add(route.path);
        assertPageHeaders(response.headers, `GET ${path} (${response.status}${cookie ? ', signed in' : ''})`);
      }
    }
    // The routes that answered HTML include the main pages people reach, and 404 pages of parameter routes.
    for (const path of ['/', '/docs', '/signup-with-agent', '/agent-console', '/operator/members', '/signin'])
      assert.ok(pages.has(path), `${path} answered HTML (${[...pages].join(' ')})`);
    const missing = await fetch(`${t.baseUrl}/newsletter/no-such-issue`);
    assert.equal(missing.status, 404);
    assert.match(missing.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(await missing.text(), /No such issue/);
    assertPageHeaders(missing.headers, 'the 404 page of a newsletter issue');
  });

  test('error pages: every form route refused for a missing CSRF field, and a member on an operator page', async () => {
    const forms = appRoutes(t.app).filter(
      (route) => route.methods.includes('POST') && !route.path.startsWith('/api/'),
    );
    let refused = 0;
    for (const route of forms) {
      const response = await fetch(t.baseUrl + concrete(route.path), {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: operatorCookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'nothing=here',
      });
      const text = await response.text();
      if (!(response.headers.get('content-type') ?? '').startsWith('text/html')) continue;
      refused++;
      assert.equal(response.status, 403, `POST ${route.path}`);
      assert.match(text, /This form has expired/, `POST ${route.path}`);
      assertPageHeaders(response.headers, `POST ${route.path} (403)`);
    }
    assert.ok(refused >= 10, `form routes answered with the 403 page (${refused})`);

    const member = await t.member('member');
    const cookie = `${SESSION_COOKIE}=${await createSession(t.deps.db, t.clock, member.id)}`;
    const operatorsOnly = await fetch(`${t.baseUrl}/operator/members`, { headers: { cookie } });
    assert.equal(operatorsOnly.status, 403);
    assert.match(await operatorsOnly.text(), /Operators only/);
    assertPageHeaders(operatorsOnly.headers, 'the operators-only 403 page');
  });

  test('JSON answers are left as they were', async () => {
    const json = await t.call('GET', '/api/events/upcoming');
    assert.equal(json.status, 200);
    assert.equal(json.headers.get('content-security-policy'), null);
    assert.equal(json.headers.get('x-content-type-options'), 'nosniff');
  });
});

describe('the approval page in Chromium', { skip: skipWithoutChromium }, () => {
  let t: TestApp;
  let browser: Browser;
  let hostile: Server;
  let hostilePort: number;
  before(async () => {
    t = await startTestApp();
    // A hostile site on a name of its own (another site, not just another port), on this machine.
    hostile = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(
        `<!doctype html><title>Win a prize</title><h1>Click the button</h1><iframe id="victim" src="${t.baseUrl}/signup-with-agent?code=ABCD-EFGH" width="600" height="400"></iframe>`,
      );
    });
    await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve));
    hostilePort = (hostile.address() as AddressInfo).port;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--host-resolver-rules=MAP evil.example 127.0.0.1',
      ],
    });
  });
  after(async () => {
    await browser?.close();
    await new Promise((resolve) => hostile?.close(resolve));
    await t?.close();
  });

  /** Console errors and warnings, uncaught page errors and CSP violations the page reports. */
  async function watched(page: Page) {
    const problems: string[] = [];
    page.on('console', (message) => {
      const where = message.location().url;
      // The browser asks for /favicon.ico on its own; the app has none (a 404, not a policy matter).
      if (where.endsWith('/favicon.ico') && /status of 404/.test(message.text())) return;
      if (message.type() === 'error' || message.type() === 'warning')
        problems.push(`console ${message.type()}: ${message.text()} (${where})`);
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    await page.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (event) =>
        console.error(`securitypolicyviolation ${event.violatedDirective} ${event.blockedURI}`),
      );
    });
    return problems;
  }

  test('a cross-site page cannot frame /signup-with-agent', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const problems = await watched(page);
    await page.goto(`http://evil.example:${hostilePort}/`);
    await page.locator('#victim').waitFor();
    const frame = await (await page.locator('#victim').elementHandle())?.contentFrame();
    assert.ok(frame, 'the iframe exists');
    await frame.waitForLoadState('load');
    // The app answered (it is the browser that refuses to show it).
    assert.ok(!frame.url().startsWith(t.baseUrl), `the frame shows no page of the app (${frame.url()})`);
    const shown = await frame.evaluate(() => document.body?.innerText ?? '').catch(() => '');
    assert.doesNotMatch(shown, /Sign in first|Approve an agent/);
    assert.ok(
      problems.some((line) => /frame-ancestors|X-Frame-Options/.test(line)),
      `Chromium reports the refusal (${problems.join(' | ')})`,
    );
    await context.close();
  });

  test('loaded normally: sign in, enter the code, approve, mint and copy a token, with no CSP violation', async () => {
    const member = await t.member('member', 'Mina');
    const started = await t.call('POST', '/api/agent/signup/start', {
      body: { scopes: ['read:public', 'events:rsvp'], client_name: 'Trip planner' },
    });
    assert.equal(started.status, 200);
    const context = await browser.newContext();
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.baseUrl });
    const page = await context.newPage();
    const problems = await watched(page);

    await page.goto(`${t.baseUrl}/signin`);
    // The page's stylesheet, served by us, applies (the content column is 64rem wide): it is not blocked.
    assert.equal(
      await page.evaluate(() => getComputedStyle(document.querySelector('main')!).maxWidth),
      '1024px',
    );
    await page.getByLabel('Email address').fill(member.email);
    await page.getByRole('button', { name: 'Send me a link' }).click();
    await page.getByText('Check your mail').waitFor();
    await page.goto(`${t.baseUrl}${outboxPath(t.deps)}`);
    const link = (await page.locator('pre').first().textContent())?.match(/http\S+/)?.[0];
    assert.ok(link, 'the outbox shows the link');
    // Opened in the browser that asked for it, the link signs in at once.
    await page.goto(link);
    await page.getByRole('heading', { name: 'My agents', level: 1 }).waitFor();

    await page.goto(started.body.verify_url_complete);
    await page.getByText('An agent asks to act for you').waitFor();
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('heading', { name: 'Approved' }).waitFor();
    const polled = await t.call('GET', `/api/agent/signup/poll?device_code=${started.body.device_code}`);
    assert.equal(polled.body.status, 'completed', 'the approval went through');

    await page.goto(`${t.baseUrl}/agent-console`);
    await page.getByLabel('Name').fill('Laptop');
    await page.getByRole('checkbox', { name: 'read:public' }).check();
    await page.getByRole('button', { name: 'Mint', exact: true }).click();
    const plaintext = (await page.locator('#new-token').textContent()) ?? '';
    assert.match(plaintext, /^agt_/);
    await page.getByRole('button', { name: 'Copy' }).click();
    // The hashed inline script ran: the token is on the clipboard.
    await page.waitForFunction(async (token) => (await navigator.clipboard.readText()) === token, plaintext);

    assert.deepEqual(problems, [], 'no CSP violation, console error or page error');
    await context.close();
  });
});
