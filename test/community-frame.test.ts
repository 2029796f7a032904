// The frame every page shares: the community's name and logo (COMMUNITY_NAME, COMMUNITY_LOGO_URL) in
// the header, the titles, the home page and the sign-in mail; the favicon; the home page's next
// events; a 404 page for browsers and the JSON error for API clients, chosen by Accept; and a
// sign-in without `next` landing on "My agents".
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { startTestApp, type TestApp } from './support/app.ts';
import { signInThroughOutbox } from './support/browser.ts';
import { launchChromium, skipWithoutChromium } from './support/chromium.ts';
import { cacheEvent } from './support/community.ts';
import { contextFor, violations, WIDTHS } from './support/pages-in-chromium.ts';

describe('the community frame', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({
      config: { communityName: 'Tool <Library>', communityLogoUrl: 'https://logo.example/mark.png' },
      // A page that fails, to see the 500 answer a browser and an API client get.
      extend: (app) => {
        app.get('/fails', async () => {
          throw new Error('a fault of the page');
        });
      },
    });
  });
  after(() => t?.close());

  test('the name and logo in the header and titles; the home page titled with the name shows the next events', async () => {
    const url = await cacheEvent(t, 'repair-cafe', 24);
    const home = await fetch(`${t.baseUrl}/`, { headers: { accept: 'text/html' } });
    const text = await home.text();
    assert.match(text, /<title>Tool &lt;Library&gt;<\/title>/);
    assert.match(text, /<h1>Tool &lt;Library&gt;<\/h1>/);
    assert.match(
      text,
      /<a class="brand" href="\/"><img class="logo" src="https:\/\/logo.example\/mark.png" alt="" width="32" height="32"> Tool &lt;Library&gt;<\/a>/,
    );
    assert.doesNotMatch(text, /agent-commons<\/a>/);
    assert.match(text, new RegExp(`<a href="${url}">Event repair-cafe</a>`));
    const highlights = await (await fetch(`${t.baseUrl}/highlights`)).text();
    assert.match(highlights, /<title>Highlights · Tool &lt;Library&gt;<\/title>/);
  });

  test('every page links the favicon, served as SVG', async () => {
    const text = await (await fetch(`${t.baseUrl}/signin`)).text();
    const href = text.match(/<link rel="icon" href="([^"]+)" type="image\/svg\+xml">/)?.[1];
    assert.ok(href, 'the icon is linked');
    const icon = await fetch(t.baseUrl + href);
    assert.equal(icon.status, 200);
    assert.equal(icon.headers.get('content-type'), 'image/svg+xml');
    assert.match(await icon.text(), /^<svg /);
  });

  test('404: a page for a browser (text/html), the JSON error for an API client', async () => {
    const browser = await fetch(`${t.baseUrl}/no-such-page?x=<b>`, {
      headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' },
    });
    assert.equal(browser.status, 404);
    assert.match(browser.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(browser.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
    assert.equal(browser.headers.get('x-frame-options'), 'DENY');
    const page = await browser.text();
    assert.match(page, /<h1>Page not found<\/h1>/);
    assert.match(page, /<title>Page not found · Tool &lt;Library&gt;<\/title>/);
    assert.match(page, /<code>\/no-such-page<\/code>/);
    for (const accept of ['application/json', '*/*', undefined]) {
      const client = await fetch(`${t.baseUrl}/no-such-page`, { headers: accept ? { accept } : {} });
      assert.equal(client.status, 404);
      assert.match(client.headers.get('content-type') ?? '', /^application\/json/, `Accept: ${accept}`);
      assert.equal((await client.json()).error, 'not_found');
    }
    // Under /api/ a browser still gets the API's answer.
    const api = await fetch(`${t.baseUrl}/api/no-such-thing`, { headers: { accept: 'text/html' } });
    assert.equal(api.status, 401);
    assert.match(api.headers.get('content-type') ?? '', /^application\/json/);
  });

  test('500: a page for a browser naming the request id, the JSON error for an API client', async () => {
    const browser = await fetch(`${t.baseUrl}/fails`, { headers: { accept: 'text/html' } });
    assert.equal(browser.status, 500);
    assert.match(browser.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(browser.headers.get('content-security-policy') ?? '', /default-src 'none'/);
    const page = await browser.text();
    assert.match(page, /<h1>Something went wrong<\/h1>/);
    assert.match(page, new RegExp(`<code>${browser.headers.get('x-request-id')}</code>`));
    assert.doesNotMatch(page, /a fault of the page/, 'the fault itself is not shown');
    const client = await fetch(`${t.baseUrl}/fails`, { headers: { accept: 'application/json' } });
    assert.equal(client.status, 500);
    assert.match(client.headers.get('content-type') ?? '', /^application\/json/);
  });

  test('a sign-in without next lands on "My agents"; the mail names the community', async () => {
    const member = await t.member('member', 'Lena');
    const browser = await signInThroughOutbox(t, member.email);
    const landed = await browser.request('GET', '/my-agents');
    assert.equal(landed.status, 200);
    assert.match(landed.text, /<h1>My agents<\/h1>/);
    const outbox = t.deps.mailer.outbox!.messages.find((message) => message.to === member.email)!;
    assert.equal(outbox.subject, 'Your sign-in link for Tool <Library>');
  });
});

describe('the 404 page in Chromium', { skip: skipWithoutChromium }, () => {
  let t: TestApp;
  let browser: Browser;
  before(async () => {
    t = await startTestApp();
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  test('a browser navigating to a missing page gets HTML that passes axe at 390 and 1280 px', async () => {
    const context = await contextFor(t, (options) => browser.newContext(options), undefined);
    const page = await context.newPage();
    const response = await page.goto(`${t.baseUrl}/nothing-here`);
    assert.equal(response?.status(), 404);
    await page.getByRole('heading', { name: 'Page not found' }).waitFor();
    for (const size of Object.values(WIDTHS)) {
      await page.setViewportSize(size);
      assert.deepEqual(await violations(page), []);
    }
    await context.close();
  });
});
