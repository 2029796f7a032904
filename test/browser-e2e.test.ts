import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { startTestApp, type TestApp } from './support/app.ts';
import { outboxPath } from './support/browser.ts';
import { launchChromium, skipWithoutChromium } from './support/chromium.ts';

const ARTIFACTS = 'test-artifacts';

describe('a person approves an agent in Chromium', { skip: skipWithoutChromium }, () => {
  let t: TestApp;
  let browser: Browser;
  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    t = await startTestApp();
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  async function startGrant() {
    const started = await t.call('POST', '/api/agent/signup/start', {
      body: { scopes: ['read:public', 'events:rsvp', 'resources:book'], client_name: 'Trip planner' },
    });
    assert.equal(started.status, 200);
    return started.body as { device_code: string; user_code: string; verify_url_complete: string };
  }
  const poll = (deviceCode: string) => t.call('GET', `/api/agent/signup/poll?device_code=${deviceCode}`);

  async function signIn(page: Page, email: string, shot: string) {
    await page.goto(`${t.baseUrl}/signin`);
    await page.getByLabel('Email address').fill(email);
    await page.screenshot({ path: `${ARTIFACTS}/${shot}-1-signin.png` });
    await page.getByRole('button', { name: 'Send me a link' }).click();
    await page.getByText('Check your mail').waitFor();
    await page.goto(`${t.baseUrl}${outboxPath(t.deps)}`);
    await page.screenshot({ path: `${ARTIFACTS}/${shot}-2-outbox.png` });
    const link = (await page.locator('pre').first().textContent())?.match(/http\S+/)?.[0];
    assert.ok(link);
    // Opened in the browser that asked for it, the link signs in without a further click.
    await page.goto(link);
    await page.getByRole('heading', { name: 'My agents', level: 1 }).waitFor();
  }

  /** The agent's link, signed in: its request at once; the code form is the way without the link. */
  async function enterCode(page: Page, url: string, shot: string) {
    await page.goto(new URL(url).origin + new URL(url).pathname);
    await page.getByLabel(/Code/).fill(new URL(url).searchParams.get('code')!);
    await page.screenshot({ path: `${ARTIFACTS}/${shot}-3-code.png` });
    await page.goto(url);
    await page.getByText('An agent asks to act for you').waitFor();
    await page.screenshot({ path: `${ARTIFACTS}/${shot}-4-review.png`, fullPage: true });
  }

  test('approve, the agent gets its token once, the person revokes it, the next call is 401', async () => {
    const member = await t.member('member', 'Mina');
    const grant = await startGrant();
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    await signIn(page, member.email, 'approve');
    await enterCode(page, grant.verify_url_complete, 'approve');
    assert.equal(await page.locator('#denied code').textContent(), 'resources:book');
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('heading', { name: 'Approved' }).waitFor();
    await page.screenshot({ path: `${ARTIFACTS}/approve-5-approved.png` });

    const completed = await poll(grant.device_code);
    assert.equal(completed.body.status, 'completed');
    const token = completed.body.agent_token as string;
    t.clock.advance(10_000);
    assert.equal((await poll(grant.device_code)).status, 410, 'delivered once');
    assert.equal((await t.call('GET', '/api/ingest/highlights/pending', { token })).status, 200);

    await page.goto(`${t.baseUrl}/agent-console`);
    await page.screenshot({ path: `${ARTIFACTS}/approve-6-console.png`, fullPage: true });
    // Revoking asks first: the disclosure opens the confirmation, its button revokes.
    await page.locator('summary', { hasText: 'Revoke Trip planner' }).click();
    await page.getByRole('button', { name: 'Revoke Trip planner' }).click();
    await page.locator('.state-revoked').waitFor();
    await page.screenshot({ path: `${ARTIFACTS}/approve-7-revoked.png`, fullPage: true });
    const refused = await t.call('GET', '/api/ingest/highlights/pending', { token });
    assert.equal(refused.status, 401);
    const row = await t.deps.db
      .selectFrom('tokens')
      .select('revoked_at')
      .where('member_id', '=', member.id)
      .executeTakeFirstOrThrow();
    assert.notEqual(row.revoked_at, null);
    await page.close();
  });

  test('deny: the poll reports cancelled once, then 410', async () => {
    const member = await t.member('member');
    const grant = await startGrant();
    const page = await browser.newPage();
    await signIn(page, member.email, 'deny');
    await enterCode(page, grant.verify_url_complete, 'deny');
    await page.getByRole('button', { name: 'Deny' }).click();
    await page.getByRole('heading', { name: 'Denied' }).waitFor();
    await page.screenshot({ path: `${ARTIFACTS}/deny-5-denied.png` });
    assert.equal((await poll(grant.device_code)).body.status, 'cancelled');
    t.clock.advance(10_000);
    assert.equal((await poll(grant.device_code)).status, 410);
    await page.close();
  });
});
