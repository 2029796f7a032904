import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { sha256 } from '../src/secrets.ts';
import { holdPort, startTestApp, type TestApp } from './support/app.ts';
import { launchChromium, skipWithoutChromium } from './support/chromium.ts';
import { type LocalOidcProvider, startOidcProvider } from './support/oidc-provider.ts';

const ARTIFACTS = 'test-artifacts';
const LABEL = 'Sign in with Example ID';
const callbackOf = (port: number) => `http://127.0.0.1:${port}/signin/oidc/callback`;

describe('OpenID Connect sign-in against a local provider, in Chromium', {
  skip: skipWithoutChromium,
}, () => {
  let provider: LocalOidcProvider;
  /** Open sign-up on (the default). */
  let open: TestApp;
  /** Invitation only. */
  let closed: TestApp;
  let browser: Browser;

  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const [openPort, closedPort] = [await holdPort(), await holdPort()];
    provider = await startOidcProvider([callbackOf(openPort.port), callbackOf(closedPort.port)]);
    const oidc = {
      issuer: provider.issuer,
      clientId: provider.clientId,
      clientSecret: provider.clientSecret,
      label: LABEL,
    };
    open = await startTestApp({ port: openPort, config: { oidc } });
    closed = await startTestApp({ port: closedPort, config: { oidc, openSignup: false } });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await open?.close();
    await closed?.close();
    await provider?.close();
  });

  /** A fresh browser profile, so no provider session carries over from another test. */
  async function freshPage(): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    return context.newPage();
  }

  /** Clicks our button, then logs in and consents on the provider's own dev pages. */
  async function signInAtProvider(page: Page, app: TestApp, login: string, shot: string, start = '/signin') {
    await page.goto(app.baseUrl + start);
    await page.screenshot({ path: `${ARTIFACTS}/oidc-${shot}-1-signin.png` });
    await page.getByRole('button', { name: LABEL }).click();
    await page.locator('input[name="login"]').fill(login);
    await page.locator('input[name="password"]').fill('any password');
    await page.screenshot({ path: `${ARTIFACTS}/oidc-${shot}-2-provider-login.png` });
    await page.getByRole('button', { name: 'Sign-in' }).click();
    const callback = page.waitForResponse((response) => response.url().includes('/signin/oidc/callback'));
    await page.getByRole('button', { name: 'Continue' }).click();
    const response = await callback;
    await page.waitForLoadState();
    await page.screenshot({ path: `${ARTIFACTS}/oidc-${shot}-3-landed.png` });
    return response;
  }

  async function sessionMember(page: Page, app: TestApp) {
    const cookie = (await page.context().cookies(app.baseUrl)).find((c) => c.name === '__session');
    if (!cookie) return undefined;
    const row = await app.deps.db
      .selectFrom('sessions')
      .select('member_id')
      .where('id_hash', '=', sha256(cookie.value))
      .executeTakeFirst();
    return row?.member_id;
  }

  test('a member signs in at the provider and lands signed in; the callback works once', async () => {
    const member = await open.member('member', 'Mina');
    provider.accounts.set('mina', { email: member.email.toUpperCase(), email_verified: true });
    const page = await freshPage();
    const callback = await signInAtProvider(page, open, 'mina', 'member');
    assert.equal(callback.status(), 303);
    await page.getByRole('heading', { name: 'My agents', level: 1 }).waitFor();
    await page.goto(`${open.baseUrl}/signin`);
    assert.match(await page.locator('main').innerText(), new RegExp(`Mina \\(${member.email}\\)`));
    assert.equal(await sessionMember(page, open), member.id, 'a stored session for the member');
    assert.ok(provider.requests.includes('/jwks'), 'the ID token signature was checked against the JWKS');

    const sessions = () =>
      open.deps.db.selectFrom('sessions').select('id_hash').where('member_id', '=', member.id).execute();
    assert.equal((await sessions()).length, 1);
    const replay = await page.goto(callback.url());
    assert.equal(replay?.status(), 400, 'a replayed callback is refused');
    assert.match(await page.locator('h1').innerText(), /no longer valid/);
    assert.equal((await sessions()).length, 1, 'the replay opened no session');
    await page.context().close();
  });

  test('a new address with open sign-up becomes a public member and returns to next', async () => {
    const email = `newcomer-${Date.now()}@idp.example`;
    provider.accounts.set('newcomer', { email, email_verified: true });
    const page = await freshPage();
    await signInAtProvider(page, open, 'newcomer', 'newcomer', '/signin?next=%2Fmembership');
    assert.equal(new URL(page.url()).pathname, '/membership');
    const member = await open.deps.db
      .selectFrom('members')
      .selectAll()
      .where('email', '=', email)
      .executeTakeFirstOrThrow();
    assert.equal(member.tier, 'public');
    assert.equal(await sessionMember(page, open), member.id);
    await page.context().close();
  });

  test('with open sign-up off, an unknown address is refused and no member is created', async () => {
    const email = `stranger-${Date.now()}@idp.example`;
    provider.accounts.set('stranger', { email, email_verified: true });
    const page = await freshPage();
    const callback = await signInAtProvider(page, closed, 'stranger', 'closed');
    assert.equal(callback.status(), 403);
    assert.match(await page.locator('h1').innerText(), /Not a member here/);
    assert.match(await page.locator('main').innerText(), new RegExp(email));
    const member = await closed.deps.db
      .selectFrom('members')
      .select('id')
      .where('email', '=', email)
      .executeTakeFirst();
    assert.equal(member, undefined);
    assert.equal((await closed.deps.db.selectFrom('sessions').select('id_hash').execute()).length, 0);
    await page.context().close();
  });

  test('an address the provider has not verified is refused', async () => {
    const email = `unverified-${Date.now()}@idp.example`;
    provider.accounts.set('unverified', { email, email_verified: false });
    const page = await freshPage();
    const callback = await signInAtProvider(page, open, 'unverified', 'unverified');
    assert.equal(callback.status(), 403);
    assert.match(await page.locator('h1').innerText(), /not verified/);
    const member = await open.deps.db
      .selectFrom('members')
      .select('id')
      .where('email', '=', email)
      .executeTakeFirst();
    assert.equal(member, undefined);
    await page.context().close();
  });

  test('cancelling at the provider leaves the person signed out', async () => {
    const page = await freshPage();
    await page.goto(`${open.baseUrl}/signin`);
    await page.getByRole('button', { name: LABEL }).click();
    const callback = page.waitForResponse((response) => response.url().includes('/signin/oidc/callback'));
    await page.getByRole('link', { name: '[ Cancel ]' }).click();
    assert.equal((await callback).status(), 403);
    assert.match(await page.locator('h1').innerText(), /did not allow/);
    assert.equal(await sessionMember(page, open), undefined);
    await page.context().close();
  });
});
