// Lists that grow with the community answer in pages on the pages too: the operator's members and
// a member's tokens on the agent console, 50 at a time, their links walking every row exactly once.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Member } from '../src/domain/members/members.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { type Browser, signInThroughOutbox } from './support/browser.ts';
import { launchChromium, skipWithoutChromium } from './support/chromium.ts';
import { engines } from './support/databases.ts';
import { contextFor, violations, WIDTHS } from './support/pages-in-chromium.ts';

const MEMBERS = 120;
const TOKENS = 75;

/** Follows a page's rel="next" links from `path`, collecting what `ids` finds on each page. */
async function walk(browser: Browser, path: string, ids: (text: string) => string[]): Promise<string[]> {
  const seen: string[] = [];
  let next: string | undefined = path;
  for (let round = 0; next && round < 20; round++) {
    const page = await browser.request('GET', next);
    assert.equal(page.status, 200);
    const found = ids(page.text);
    assert.ok(found.length <= 50, `at most 50 on a page, got ${found.length}`);
    seen.push(...found);
    next = page.text.match(/<a href="([^"]+)" rel="next">/)?.[1]?.replace(/&amp;/g, '&');
  }
  return seen;
}

for (const engine of engines) {
  describe(`member and token lists are paged (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    let operator: Member;
    let holder: Member;
    const joined: string[] = [];
    const minted: string[] = [];
    before(async () => {
      t = await startTestApp({ engine: engine.name });
      operator = await t.member('operator', 'Olga');
      holder = await t.member('member', 'Hal');
      for (let i = 0; i < MEMBERS; i++) {
        // Pairs share a timestamp, so the cursor's tie-break on the id is exercised.
        if (i % 2 === 0) t.clock.advance(1000);
        joined.push((await t.member('member', `Member ${i}`)).id);
      }
      for (let i = 0; i < TOKENS; i++) {
        if (i % 2 === 0) t.clock.advance(1000);
        await t.token(holder, ['read:public']);
      }
      const rows = await t.deps.db
        .selectFrom('tokens')
        .select('id')
        .where('member_id', '=', holder.id)
        .execute();
      minted.push(...rows.map((row) => row.id));
    });
    after(() => t?.close());

    test('in Chromium, the paged lists follow their Next page link, axe-clean at phone and desktop width', {
      skip: skipWithoutChromium || engine.name !== 'sqlite',
    }, async () => {
      const chromium = await launchChromium();
      try {
        for (const [viewer, path, rows] of [
          [operator, '/operator/members', 'tbody tr'],
          [holder, '/agent-console', 'article.card[id^="token-"]'],
        ] as const) {
          const context = await contextFor(t, (options) => chromium.newContext(options), viewer);
          const page = await context.newPage();
          await page.goto(t.baseUrl + path);
          assert.equal(await page.locator(rows).count(), 50, path);
          for (const size of Object.values(WIDTHS)) {
            await page.setViewportSize(size);
            assert.deepEqual(await violations(page), [], `${path} at ${size.width} px`);
          }
          await page.getByRole('link', { name: 'Next page' }).click();
          await page.waitForURL(/cursor=/);
          assert.ok((await page.locator(rows).count()) > 0, `${path}, second page`);
          assert.equal(await page.getByRole('link', { name: 'First page' }).count(), 1);
          assert.deepEqual(await violations(page), [], `${path}, second page`);
          await context.close();
        }
      } finally {
        await chromium.close();
      }
    });

    test('/operator/members walks every member once, oldest first, 50 to a page', async () => {
      const browser = await signInThroughOutbox(t, operator.email);
      const seen = await walk(browser, '/operator/members', (text) =>
        [...text.matchAll(/<tr id="([^"]+)">/g)].map((m) => m[1]),
      );
      assert.equal(new Set(seen).size, seen.length, 'no member twice');
      for (const id of [operator.id, holder.id, ...joined]) assert.ok(seen.includes(id), id);
      const rows = await t.deps.db.selectFrom('members').select(['id', 'created_at']).execute();
      const oldestFirst = rows
        .sort((a, b) => Number(a.created_at) - Number(b.created_at) || (a.id < b.id ? -1 : 1))
        .map((row) => row.id);
      assert.deepEqual(seen, oldestFirst, 'oldest first, ties by id');
    });

    test('the agent console walks every token once, newest first, 50 to a page', async () => {
      const browser = await signInThroughOutbox(t, holder.email);
      const seen = await walk(browser, '/agent-console', (text) =>
        [...text.matchAll(/<article class="card" id="token-([^"]+)"/g)].map((m) => m[1]),
      );
      assert.equal(seen.length, TOKENS);
      assert.deepEqual([...seen].sort(), [...minted].sort());
      const myAgents = await browser.request('GET', '/my-agents');
      assert.equal(myAgents.status, 200);
      assert.match(myAgents.text, /The newest 50 are shown/);
    });
  });
}
