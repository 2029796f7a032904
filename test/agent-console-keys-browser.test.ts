import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { jwkThumbprint } from '../src/domain/auth/signing-keys.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { outboxPath } from './support/browser.ts';
import { launchChromium, skipWithoutChromium } from './support/chromium.ts';
import { newClientKey } from './support/signer.ts';

describe('a member binds and enforces a signing key in Chromium', { skip: skipWithoutChromium }, () => {
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

  test('bind the key, require signatures, revoke the key: the page and the stored token agree', async () => {
    const member = await t.member('member', 'Kei');
    const token = await t.token(member, ['membership:read']);
    const [{ id }] = await t.deps.db
      .selectFrom('tokens')
      .select('id')
      .where('member_id', '=', member.id)
      .execute();
    const stored = () =>
      t.deps.db
        .selectFrom('tokens')
        .select(['signing_key_id', 'signing_enforced'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
        errors.push(message.text());
    });
    // The browser asks for /favicon.ico on its own; anything else the pages load must be there.
    page.on('response', (response) => {
      if (response.status() === 404 && !response.url().endsWith('/favicon.ico')) errors.push(response.url());
    });
    await page.goto(`${t.baseUrl}/signin`);
    await page.getByLabel('Email address').fill(member.email);
    await page.getByRole('button', { name: 'Send me a link' }).click();
    await page.getByText('Check your mail').waitFor();
    await page.goto(`${t.baseUrl}${outboxPath(t.deps)}`);
    const link = (await page.locator('pre').first().textContent())?.match(/http\S+/)?.[0];
    assert.ok(link);
    // Opened in the browser that asked for it, the link signs in at once.
    await page.goto(link);
    await page.getByRole('heading', { name: 'My agents', level: 1 }).waitFor();

    await page.goto(`${t.baseUrl}/agent-console`);
    const key = newClientKey();
    await page.getByLabel(/Ed25519 public key/).fill(JSON.stringify(key.jwk));
    await page.getByRole('button', { name: 'Bind key' }).click();
    await page.getByText(jwkThumbprint(key.jwk.x), { exact: true }).waitFor();
    assert.equal((await stored()).signing_key_id, key.keyId);

    await page.getByRole('button', { name: 'Require signatures' }).click();
    await page.getByRole('button', { name: 'Stop requiring signatures' }).waitFor();
    assert.equal(Number((await stored()).signing_enforced), 1);
    assert.equal((await t.call('GET', '/api/activity/me', { token })).status, 401);

    await page.getByRole('button', { name: 'Revoke key' }).click();
    await page.getByText('no key bound: this token answers nothing').waitFor();
    assert.equal((await stored()).signing_key_id, null);
    assert.deepEqual(errors, [], 'no console errors (the CSP allows everything the page uses)');
  });
});
