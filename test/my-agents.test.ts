// "My agents" (/my-agents): a call an agent makes over MCP shows on the open page within a second,
// the activity log pages over more than 10 000 calls on an index, the page passes axe at phone and
// desktop width, and an agent is revoked with the keyboard alone.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import type { Browser, Page } from 'playwright-core';
import { activityIdPrefix, activity as activityTable } from '../src/storage/activity.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { launchChromium, skipWithoutChromium } from './support/chromium.ts';
import { cacheEvent, tokenIdOf } from './support/community.ts';
import { engines } from './support/databases.ts';
import { contextFor, screenshots, violations, WIDTHS } from './support/pages-in-chromium.ts';

const MCP_HEADERS = {
  accept: 'application/json, text/event-stream',
  'content-type': 'application/json',
  'mcp-protocol-version': '2025-06-18',
};

/** The page's HTML as the member's browser gets it (session cookie), without a browser. */
async function pageText(t: TestApp, cookie: string, path: string) {
  const response = await fetch(t.baseUrl + path, { headers: { cookie, accept: 'text/html' } });
  return { status: response.status, text: await response.text() };
}

async function sessionCookie(t: TestApp, memberId: string): Promise<string> {
  const { createSession, SESSION_COOKIE } = await import('../src/domain/auth/sessions.ts');
  return `${SESSION_COOKIE}=${await createSession(t.deps.db, t.clock, memberId)}`;
}

for (const engine of engines) {
  describe(`"My agents" activity paging (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine: engine.name });
    });
    after(() => t?.close());

    test('over 10 000 calls: 50 a page, newest first, every row once, filtered by agent and kind, on an index', async () => {
      const member = await t.member('member', 'Paige');
      const busy = await t.token(member, ['read:public']);
      const quiet = await t.token(member, ['membership:read']);
      const prefixOf = async (token: string) =>
        (
          await t.deps.db
            .selectFrom('tokens')
            .select('prefix')
            .where('id', '=', await tokenIdOf(t, token))
            .executeTakeFirstOrThrow()
        ).prefix;
      const [busyPrefix, quietPrefix] = [await prefixOf(busy), await prefixOf(quiet)];
      const total = 10_200;
      const start = t.clock.now() - total * 1000;
      const rows = Array.from({ length: total }, (_, i) => ({
        id: `${activityIdPrefix(start + i * 1000)}${String(i).padStart(5, '0')}`,
        member_id: member.id,
        at: start + i * 1000,
        operation: i % 7 === 0 ? 'rsvpToEvent' : 'listUpcomingEvents',
        surface: i % 2 ? 'mcp' : 'rest',
        token_prefix: i % 100 === 0 ? quietPrefix : busyPrefix,
        status: i % 11 === 0 ? 403 : 200,
        outcome: i % 11 === 0 ? 'insufficient_scope' : 'ok',
        target: null,
      }));
      for (let i = 0; i < rows.length; i += 500)
        await t.deps.db
          .insertInto('activity')
          .values(rows.slice(i, i + 500))
          .execute();
      const cookie = await sessionCookie(t, member.id);

      const idsOn = (text: string) => [...text.matchAll(/<tr id="call-([0-9a-z]+)"/g)].map((m) => m[1]);
      const nextOf = (text: string) =>
        text.match(/href="([^"]+)#activity" rel="next"/)?.[1]?.replaceAll('&amp;', '&');
      let path: string | undefined = '/my-agents';
      const seen: string[] = [];
      const started = performance.now();
      for (let pageNo = 0; pageNo < 5 && path; pageNo++) {
        const { status, text } = await pageText(t, cookie, path);
        assert.equal(status, 200);
        const ids = idsOn(text);
        assert.equal(ids.length, 50);
        seen.push(...ids);
        path = nextOf(text);
      }
      assert.ok(performance.now() - started < 5000, 'five pages in under five seconds');
      const expected = rows
        .map((row) => row.id)
        .reverse()
        .slice(0, 250);
      assert.deepEqual(seen, expected, 'newest first, each row once across pages');

      // A deep page costs what the first one does: the cursor is a range of the index.
      const deep = await pageText(t, cookie, `/my-agents?before=${rows[300].id}`);
      assert.deepEqual(
        idsOn(deep.text),
        rows
          .slice(250, 300)
          .map((row) => row.id)
          .reverse(),
      );

      const quietPage = await pageText(t, cookie, `/my-agents?agent=${quietPrefix}`);
      const quietIds = idsOn(quietPage.text);
      assert.equal(quietIds.length, 50);
      for (const id of quietIds) assert.equal(rows.find((row) => row.id === id)?.token_prefix, quietPrefix);
      const refused = await pageText(t, cookie, '/my-agents?kind=refused');
      for (const id of idsOn(refused.text)) assert.equal(rows.find((row) => row.id === id)?.status, 403);
      assert.match(refused.text, /insufficient scope \(403\)/);
      const writes = await pageText(t, cookie, `/my-agents?kind=write&agent=${busyPrefix}`);
      for (const id of idsOn(writes.text))
        assert.equal(rows.find((row) => row.id === id)?.operation, 'rsvpToEvent');
      assert.match(writes.text, /RSVP to an event/, 'the operation in words');

      if (engine.name === 'sqlite') {
        for (const query of [
          { writes: [], limit: 51 },
          { writes: [], limit: 51, before: rows[5000].id },
          { writes: [], limit: 51, tokenPrefix: quietPrefix },
        ]) {
          const compiled = activityTable.pageQuery(t.deps.db, member.id, query).compile();
          const parameters = [...compiled.parameters];
          const plan = await sql
            .raw(
              `explain query plan ${compiled.sql.replace(/\?/g, () => {
                const value = parameters.shift();
                return typeof value === 'number' ? String(value) : `'${String(value)}'`;
              })}`,
            )
            .execute(t.deps.db);
          const details = (plan.rows as { detail: string }[]).map((row) => row.detail).join(' | ');
          assert.match(details, /USING (COVERING )?INDEX activity_member/, details);
          assert.doesNotMatch(details, /TEMP B-TREE/, `no sort: ${details}`);
        }
      }
    });
  });
}

describe('"My agents" in Chromium', { skip: skipWithoutChromium }, () => {
  let t: TestApp;
  let browser: Browser;
  before(async () => {
    t = await startTestApp({ limits: { anonymousPerMinute: 10_000, tokenPerMinute: 10_000 } });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  test('a tools/call over MCP with the member’s token shows on the open page within a second, linked to its event', async () => {
    const member = await t.member('member', 'Marta');
    const token = await t.token(member, ['read:public', 'events:rsvp']);
    const eventUrl = await cacheEvent(t, 'live-demo');
    const context = await contextFor(t, (options) => browser.newContext(options), member);
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    await page.goto(`${t.baseUrl}/my-agents`);
    await page.getByRole('heading', { name: 'My agents', level: 1 }).waitFor();
    assert.equal(await page.locator('#activity-log tbody tr').count(), 0);

    const answer = await fetch(`${t.baseUrl}/api/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: `Bearer ${token}` },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'ic_events_rsvp', arguments: { event_url: eventUrl } },
      }),
    });
    assert.equal(answer.status, 200, await answer.clone().text());
    const answered = performance.now();
    const row = page.locator('#activity-log tbody tr').first();
    await row.waitFor({ timeout: 5000 });
    const shownAfter = performance.now() - answered;
    assert.ok(shownAfter < 1000, `shown ${Math.round(shownAfter)} ms after the answer`);
    const text = (await row.innerText()).replace(/\s+/g, ' ');
    assert.match(text, /RSVP to an event/);
    assert.match(text, /MCP/);
    assert.match(text, /Done/);
    assert.equal(await row.getByRole('link', { name: 'the event' }).getAttribute('href'), eventUrl);
    assert.match(await page.locator('#live-status').innerText(), /Updated/);
    assert.deepEqual(problems, []);
    await context.close();
  });

  test('axe: 0 violations at 390 and 1280 px, with agents, calls (a sandbox one among them) and events', async () => {
    const member = await t.member('member', 'Axel <b>');
    const token = await t.token(member, ['read:public', 'events:rsvp']);
    const sandbox = await t.token(member, ['read:public', 'events:rsvp'], { sandbox: true });
    const eventUrl = await cacheEvent(t, 'axe-demo');
    for (const bearer of [token, sandbox])
      await t.call('POST', '/api/events/rsvp', { token: bearer, body: { event_url: eventUrl } });
    await t.call('GET', '/api/tier/me', { token });
    const context = await contextFor(t, (options) => browser.newContext(options), member);
    const page = await context.newPage();
    await page.goto(`${t.baseUrl}/my-agents`);
    assert.match(await page.locator('#activity-log').innerText(), /Sandbox/);
    assert.doesNotMatch(await page.content(), /Axel <b>/, 'names are escaped');
    for (const [name, size] of Object.entries(WIDTHS)) {
      await page.setViewportSize(size);
      assert.deepEqual(await violations(page), [], `axe at ${name} width`);
      const overflow = await page.evaluate(
        () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
      );
      assert.ok(overflow <= 1, `no sideways scroll at ${name} width (${overflow}px)`);
    }
    await screenshots(page, 'my-agents', 'my-agents');
    await context.close();
  });

  /** Presses Tab until the focused element's accessible text matches; focus must be visible throughout. */
  async function tabTo(page: Page, target: RegExp, limit = 80): Promise<void> {
    for (let i = 0; i < limit; i++) {
      await page.keyboard.press('Tab');
      const focused = await page.evaluate(() => {
        const element = document.activeElement as HTMLElement | null;
        if (!element || element === document.body) return undefined;
        const style = getComputedStyle(element);
        return {
          text: (element.getAttribute('aria-label') ?? element.innerText ?? '').trim(),
          outline: style.outlineStyle !== 'none' && Number.parseFloat(style.outlineWidth) >= 2,
        };
      });
      if (!focused) continue;
      assert.ok(focused.outline, `focus is visible on ${focused.text}`);
      if (target.test(focused.text)) return;
    }
    assert.fail(`Tab never reached ${target}`);
  }

  test('keyboard only: open the revoke confirmation, revoke; the token is refused and the page says Revoked', async () => {
    const member = await t.member('member', 'Kim');
    const token = await t.token(member, ['membership:read']);
    const context = await contextFor(t, (options) => browser.newContext(options), member);
    const page = await context.newPage();
    await page.setViewportSize(WIDTHS.phone);
    await page.goto(`${t.baseUrl}/my-agents`);
    await tabTo(page, /^Revoke .*…$/);
    await page.keyboard.press('Enter');
    await tabTo(page, /^Revoke /);
    assert.equal(await page.evaluate(() => document.activeElement?.tagName), 'BUTTON');
    await Promise.all([page.waitForURL(`${t.baseUrl}/my-agents`), page.keyboard.press('Enter')]);
    await page.locator('.state-revoked').first().waitFor();
    const stored = await t.deps.db
      .selectFrom('tokens')
      .select('revoked_at')
      .where('id', '=', await tokenIdOf(t, token))
      .executeTakeFirstOrThrow();
    assert.notEqual(stored.revoked_at, null);
    assert.equal((await t.call('GET', '/api/tier/me', { token })).status, 401);
    assert.match(await page.locator('#event-log').innerText(), /token revoked/);
    await context.close();
  });
});
