// Every page, measured: axe-core finds no WCAG 2.1 A or AA
// violation on any page, signed out and signed in as each tier, light and dark; the approval flow
// works with the keyboard alone, focus always visible; the dashboard's charts render; and every page
// is saved as a screenshot at phone and desktop width under test-artifacts/screenshots/.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { DEFAULT_TIERS } from '../src/domain/access/tiers.ts';
import type { Member } from '../src/domain/members/members.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { linkFromOutbox, outboxPath } from './support/browser.ts';
import { type BusyCommunity, busyCommunity } from './support/busy-community.ts';
import { launchChromium, skipWithoutChromium } from './support/chromium.ts';
import { engines } from './support/databases.ts';
import {
  contextFor,
  fitsThePhone,
  pagePaths,
  screenshots,
  shotName,
  violations,
} from './support/pages-in-chromium.ts';

// Once, on the embedded engine: a page's markup does not depend on the engine (what it shows is read
// by domain functions the engine suites run on both, and test/operator-landing.test.ts draws the
// dashboard from PostgreSQL too), and axe over every page as every viewer takes over a minute.
for (const engine of engines.filter((candidate) => candidate.name === 'sqlite')) {
  describe(`every page in Chromium: axe, keyboard, screenshots (${engine.name})`, {
    skip: skipWithoutChromium || engine.skip,
  }, () => {
    let t: TestApp;
    let browser: Browser;
    let community: BusyCommunity;
    const byTier = new Map<string, Member>();
    before(async () => {
      t = await startTestApp({
        engine: engine.name,
        limits: { anonymousPerMinute: 10_000, tokenPerMinute: 10_000 },
      });
      community = await busyCommunity(t);
      for (const tier of DEFAULT_TIERS) byTier.set(tier.name, await t.member(tier.name, `Tess ${tier.name}`));
      browser = await launchChromium();
    });
    after(async () => {
      await browser?.close();
      await t?.close();
    });

    const viewers = () => [
      { name: 'signed-out', member: undefined as Member | undefined },
      ...[...byTier].map(([tier, member]) => ({ name: tier, member: member as Member | undefined })),
    ];

    test('axe: 0 WCAG 2.1 A/AA violations on every page, signed out and as each tier; screenshots at phone and desktop width', async () => {
      const paths = pagePaths(t);
      assert.ok(paths.length >= 15, `the app's pages (${paths.join(' ')})`);
      const found: string[] = [];
      let checked = 0;
      // A page whose markup another viewer already had checked (the same 403, the same reference)
      // is not checked again: only the header's name and the forms' CSRF values differ.
      const seen = new Set<string>();
      const markupOf = (text: string) =>
        text
          .replace(/<span class="viewer" data-viewer>.*?<\/span><\/nav>/s, '')
          .replace(/name="csrf" value="[^"]*"/g, 'name="csrf"');
      for (const viewer of viewers()) {
        for (const colorScheme of ['light', 'dark'] as const) {
          // Dark is checked for the signed-out visitor and the operator, who between them see every page.
          if (colorScheme === 'dark' && !['signed-out', 'operator'].includes(viewer.name)) continue;
          const context = await contextFor(
            t,
            (options) => browser.newContext(options),
            viewer.member,
            colorScheme,
          );
          const page = await context.newPage();
          for (const path of paths) {
            const response = await page.goto(t.baseUrl + path);
            if (!(response?.headers()['content-type'] ?? '').startsWith('text/html')) continue;
            checked++;
            const key = `${colorScheme} ${markupOf(await page.content())}`;
            if (seen.has(key)) continue;
            seen.add(key);
            for (const line of await violations(page))
              found.push(`${viewer.name} ${colorScheme} ${path}: ${line}`);
            // The pictures are the same on either engine: taken once, on the embedded one.
            if (
              engine.name === 'sqlite' &&
              colorScheme === 'light' &&
              ['signed-out', 'operator'].includes(viewer.name)
            ) {
              const overflow = await fitsThePhone(page);
              if (overflow > 1)
                found.push(`${viewer.name} ${path}: scrolls sideways by ${overflow}px on a phone`);
              await screenshots(page, `${engine.name}/${viewer.name}`, shotName(path));
            }
          }
          await context.close();
        }
      }
      assert.ok(checked > paths.length * 6, `pages checked: ${checked}`);
      assert.deepEqual(found, [], `axe found:\n${found.join('\n')}`);
    });

    test('the axe check reports what it should: a page with known faults fails it', async () => {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.setContent(
        '<!doctype html><html lang="en"><head><title>Faults</title></head><body><main>' +
          '<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">' +
          '<p style="color:#bbb;background:#fff">Too faint to read</p>' +
          '<input type="text"></main></body></html>',
      );
      const found = (await violations(page)).map((line) => line.split(' ')[0]);
      await context.close();
      assert.deepEqual(found.sort(), ['color-contrast', 'image-alt', 'label']);
    });

    test('the operator dashboard draws its charts with the demo community data, and they are saved as pictures', async () => {
      const context = await contextFor(t, (options) => browser.newContext(options), community.operator);
      const page = await context.newPage();
      await page.goto(`${t.baseUrl}/operator`);
      for (const id of [
        'chart-requests',
        'chart-refusals',
        'chart-tokens',
        'chart-backlogs',
        'chart-operations',
      ]) {
        const chart = page.locator(`#${id} svg`);
        const box = await chart.boundingBox();
        assert.ok(box && box.width > 200 && box.height > 50, `${id} is drawn (${JSON.stringify(box)})`);
        const bars = await chart.locator('rect').evaluateAll((rects) =>
          rects.map((rect) => ({
            height: rect.getBoundingClientRect().height,
            fill: getComputedStyle(rect).fill,
          })),
        );
        assert.ok(bars.length > 0, `${id} has bars`);
        for (const bar of bars) {
          assert.ok(bar.height > 0, `${id}: a bar with no height`);
          assert.match(bar.fill, /^rgb\(/, `${id}: bars are coloured by the stylesheet (${bar.fill})`);
          assert.notEqual(bar.fill, 'rgb(0, 0, 0)', `${id}: the stylesheet's colour applies`);
        }
        await page
          .locator(`#${id}`)
          .screenshot({ path: `test-artifacts/screenshots/${engine.name}/chart-${id}.png` });
      }
      assert.deepEqual(await violations(page), []);
      await context.close();
    });

    /** Presses Tab until the focused element's accessible text matches, returning what was passed on the way. */
    async function tabTo(page: Page, target: RegExp, limit = 60): Promise<string[]> {
      const passed: string[] = [];
      for (let i = 0; i < limit; i++) {
        await page.keyboard.press('Tab');
        const focused = await page.evaluate(() => {
          const element = document.activeElement as HTMLElement | null;
          if (!element || element === document.body) return undefined;
          const style = getComputedStyle(element);
          return {
            text: (
              element.getAttribute('aria-label') ??
              element.innerText ??
              (element as HTMLInputElement).value ??
              ''
            ).trim(),
            tag: element.tagName.toLowerCase(),
            outline: style.outlineStyle !== 'none' && Number.parseFloat(style.outlineWidth) >= 2,
          };
        });
        if (!focused) continue;
        assert.ok(focused.outline, `focus is visible on <${focused.tag}> ${focused.text}`);
        passed.push(`${focused.tag}:${focused.text}`);
        if (target.test(focused.text) || target.test(`${focused.tag}:${focused.text}`)) return passed;
      }
      assert.fail(`Tab never reached ${target} (passed ${passed.join(' | ')})`);
    }

    test('keyboard only: sign in, open the mailed link, read what the agent may do, approve; the grant is stored approved', async () => {
      const member = byTier.get('member')!;
      const started = await t.call('POST', '/api/agent/signup/start', {
        body: { scopes: ['read:public', 'events:rsvp', 'resources:book'], client_name: 'Keyboard planner' },
      });
      assert.equal(started.status, 200, started.text);
      const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
      const page = await context.newPage();
      await page.goto(started.body.verify_url_complete);
      // The first link the keys reach is the header's, which also comes back here after signing in.
      await tabTo(page, /^Sign in$/);
      await page.keyboard.press('Enter');
      await page.waitForURL((url) => url.pathname === '/signin');
      await tabTo(page, /^$/); // the email field (an empty input)
      assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('type')), 'email');
      await page.keyboard.type(member.email);
      await page.keyboard.press('Enter');
      await page.getByText('Check your mail').waitFor();
      // Opening the mailed link is leaving the page for the mail program: a navigation, not a key.
      const outbox = await (await fetch(`${t.baseUrl}${outboxPath(t.deps)}`)).text();
      await page.goto(
        `${t.baseUrl}/signin/confirm?link=${encodeURIComponent(linkFromOutbox(outbox))}&next=${encodeURIComponent(new URL(started.body.verify_url_complete).pathname + new URL(started.body.verify_url_complete).search)}`,
      );
      // Opened in the browser that asked for it, the link signs in and lands on the agent's request,
      // its code already entered: Approve is the one step left.
      await page.waitForURL((url) => url.pathname === '/signup-with-agent');
      await page.getByRole('heading', { name: 'An agent asks to act for you' }).waitFor();
      assert.ok(
        await page.getByText(started.body.user_code, { exact: true }).isVisible(),
        'the code, to compare',
      );
      await screenshots(page, `${engine.name}/flow`, 'approval-review');
      // What it may do is on the page before the decision, and Approve is the last step the keys reach.
      // (No named function inside evaluate: the test runner's transform would name it with a helper the page lacks.)
      const order = await page.evaluate(
        (selectors) => {
          const all = [...document.querySelectorAll('*')];
          return selectors.map((selector) => all.indexOf(document.querySelector(selector) as Element));
        },
        ['#who', '#granted', '#denied', '#sandbox', 'button[value=approve]'],
      );
      const [who, may, denied, mode, approve] = order;
      assert.ok(
        who >= 0 && who < may && may < denied && denied < mode && mode < approve,
        `who, may, denied, mode, approve in that order: ${order}`,
      );
      const passed = await tabTo(page, /^Approve$/);
      assert.ok(
        passed.some((line) => line.includes('agent console')),
        `the way to revoke later is reachable first (${passed.join(' | ')})`,
      );
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Approved' }).waitFor();
      await screenshots(page, `${engine.name}/flow`, 'approval-approved');
      const stored = await t.deps.db
        .selectFrom('device_grants')
        .select(['status', 'member_id', 'granted_scopes', 'denied_scopes'])
        .where('client_name', '=', 'Keyboard planner')
        .executeTakeFirstOrThrow();
      assert.equal(stored.member_id, member.id);
      assert.equal(stored.status, 'approved');
      assert.deepEqual(JSON.parse(stored.granted_scopes ?? '[]'), ['read:public', 'events:rsvp']);
      assert.deepEqual(JSON.parse(stored.denied_scopes ?? '[]'), ['resources:book']);
      const polled = await t.call('GET', `/api/agent/signup/poll?device_code=${started.body.device_code}`);
      assert.equal(polled.body.status, 'completed', polled.text);
      assert.deepEqual(polled.body.granted_scopes, ['read:public', 'events:rsvp']);
      await context.close();
    });

    test('the agent console by keyboard: a preset, mint, the revoke confirmation', async () => {
      const member = byTier.get('core')!;
      const context = await contextFor(t, (options) => browser.newContext(options), member);
      const page = await context.newPage();
      await page.goto(`${t.baseUrl}/agent-console`);
      await tabTo(page, /^Events and RSVP$/);
      await page.keyboard.press('Enter');
      await page.waitForURL(/preset=events_and_rsvp/);
      const checked = await page
        .locator('input[name=scope]:checked')
        .evaluateAll((boxes) => boxes.map((box) => (box as HTMLInputElement).value));
      assert.deepEqual(checked, ['read:public', 'membership:read', 'events:read_upcoming', 'events:rsvp']);
      await tabTo(page, /^Mint$/);
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Your new token' }).waitFor();
      const rows = await t.deps.db
        .selectFrom('tokens')
        .selectAll()
        .where('member_id', '=', member.id)
        .execute();
      assert.equal(rows.length, 1);
      assert.deepEqual(JSON.parse(rows[0].scopes), checked);
      await screenshots(page, `${engine.name}/flow`, 'console-minted');
      await tabTo(page, /^Revoke Events and RSVP/);
      await page.keyboard.press('Enter');
      await tabTo(page, /^Revoke Events and RSVP$/); // the confirmation's button (its accessible name)
      await page.keyboard.press('Enter');
      await page.locator('.state-revoked').waitFor();
      const revoked = await t.deps.db
        .selectFrom('tokens')
        .select('revoked_at')
        .where('id', '=', rows[0].id)
        .executeTakeFirstOrThrow();
      assert.notEqual(revoked.revoked_at, null);
      await context.close();
    });
  });
}
