// /docs in Chromium at phone and desktop width: axe finds nothing, the filter box narrows the
// contents to a typed operation, the keyboard alone reaches and follows it, no raw backtick is in
// the rendered text, the copy button copies, no CSP violation; and without JavaScript every
// section is there and anchors work. Screenshots under test-artifacts/screenshots/reference/.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { OPERATIONS } from '../src/operations/registry.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { launchChromium, skipWithoutChromium } from './support/chromium.ts';
import { SCREENSHOTS, violations, WIDTHS } from './support/pages-in-chromium.ts';

/** Console errors and warnings, uncaught page errors and CSP violations the page reports. */
async function watched(page: Page): Promise<string[]> {
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning')
      problems.push(`console ${message.type()}: ${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) =>
      console.error(`securitypolicyviolation ${event.violatedDirective} ${event.blockedURI}`),
    );
  });
  return problems;
}

describe('/docs in Chromium', { skip: skipWithoutChromium }, () => {
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

  for (const [width, size] of Object.entries(WIDTHS)) {
    test(`at ${size.width} px: axe, filter by keyboard alone, no raw backticks, copy, no CSP violation`, async () => {
      const context = await browser.newContext({ viewport: size });
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.baseUrl });
      const page = await context.newPage();
      const problems = await watched(page);
      await page.goto(`${t.baseUrl}/docs`);
      const search = page.getByLabel('Filter operations');
      await search.waitFor();

      assert.deepEqual(await violations(page), [], 'axe, as loaded');
      assert.equal(
        await page.evaluate(
          () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
        ),
        0,
        'the page does not scroll sideways',
      );
      const text = await page.locator('main').innerText();
      assert.doesNotMatch(text.replace(/curl [^\n]*/g, ''), /`/, 'no raw backtick in the rendered text');
      assert.match(text, /Poll every interval seconds/);
      await page.screenshot({ path: `${SCREENSHOTS}/reference/docs-${width}.png` });

      // Keyboard only: Tab until the filter box has focus, type an operation id, Tab to the one
      // result, Enter follows its anchor.
      await page.keyboard.press('Tab');
      for (let i = 0; i < 40 && !(await search.evaluate((el) => el === document.activeElement)); i++)
        await page.keyboard.press('Tab');
      assert.ok(await search.evaluate((el) => el === document.activeElement), 'Tab reaches the filter box');
      await page.keyboard.type('cancelBooking');
      const shown = page.locator('.toc li[data-op]:visible');
      assert.deepEqual(
        await shown.evaluateAll((items) => items.map((item) => (item as HTMLElement).dataset.op)),
        ['cancelBooking'],
      );
      assert.equal(await page.locator('section.op:visible').count(), 1, 'one section is shown');
      assert.match(
        (await page.locator('#op-search-count').textContent()) ?? '',
        /^1 of \d+ operations match/,
      );
      await page.keyboard.press('Tab');
      const focused = await page.evaluate(() => document.activeElement?.getAttribute('href'));
      assert.equal(focused, '#cancelBooking', 'the next Tab is the result');
      await page.keyboard.press('Enter');
      await page.waitForFunction(() => location.hash === '#cancelBooking');
      assert.ok(await page.locator('#cancelBooking').isVisible());
      const top = await page.locator('#cancelBooking').evaluate((el) => el.getBoundingClientRect().top);
      assert.ok(Math.abs(top) < 5, `the section is scrolled to (${top})`);
      assert.deepEqual(await violations(page), [], 'axe, filtered');
      await page.screenshot({ path: `${SCREENSHOTS}/reference/docs-filtered-${width}.png` });

      // Words match too: a tool name and a path narrow it, clearing it shows all again.
      await search.fill('ic_events_rsvp_cancel');
      assert.equal(await page.locator('section.op:visible').count(), 1);
      await search.fill('/api/signal');
      assert.ok((await page.locator('section.op:visible').count()) >= 5);
      await search.fill('');
      assert.equal(await page.locator('section.op:visible').count(), OPERATIONS.length);

      // The copy button copies the block beside it.
      await page.locator('#listUpcomingEvents').scrollIntoViewIfNeeded();
      await page
        .locator('#listUpcomingEvents .example')
        .first()
        .getByRole('button', { name: 'Copy' })
        .click();
      const expected = await page.locator('#listUpcomingEvents-curl').textContent();
      await page.waitForFunction(async (want) => (await navigator.clipboard.readText()) === want, expected);
      assert.match(expected ?? '', /^curl -sS http:\/\/127\.0\.0\.1:\d+\/api\/events\/upcoming$/);

      assert.deepEqual(problems, [], 'no CSP violation, console error or page error');
      await context.close();
    });
  }

  test('dark colour scheme: axe finds nothing either', async () => {
    const context = await browser.newContext({ viewport: WIDTHS.desktop, colorScheme: 'dark' });
    const page = await context.newPage();
    await page.goto(`${t.baseUrl}/docs`);
    await page.getByLabel('Filter operations').waitFor();
    assert.deepEqual(await violations(page), []);
    await context.close();
  });

  test('without JavaScript every section is shown, anchors work and the script-only controls stay hidden', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false, viewport: WIDTHS.phone });
    const page = await context.newPage();
    await page.goto(`${t.baseUrl}/docs`);
    assert.equal(await page.locator('section.op:visible').count(), OPERATIONS.length);
    assert.equal(await page.locator('form.op-search').isVisible(), false, 'no filter box that cannot filter');
    assert.equal(await page.locator('button.copy:visible').count(), 0, 'no copy button that cannot copy');
    await page.locator('.toc a[href="#searchDirectory"]').click();
    assert.ok(page.url().endsWith('#searchDirectory'));
    const top = await page.locator('#searchDirectory').evaluate((el) => el.getBoundingClientRect().top);
    assert.ok(Math.abs(top) < 5, `the anchor scrolls to its section (${top})`);
    await page.screenshot({ path: `${SCREENSHOTS}/reference/docs-no-script-phone.png` });
    await context.close();
  });
});
