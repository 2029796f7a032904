// The mailed sign-in link in real Chromium against a listening server, read from the dev outbox:
// opened in the browser that asked for it, it signs in at once and lands where the member was going
// (an agent's request waits with Approve the one step left); opened anywhere else (another browser,
// a scanner's plain GET) it spends nothing and shows one button. axe at phone and desktop width on
// the pages this flow shows, and their screenshots under test-artifacts/screenshots/.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { sha256 } from '../src/secrets.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { outboxPath } from './support/browser.ts';
import { launchChromium, skipWithoutChromium } from './support/chromium.ts';
import { pkce, registerClient } from './support/oauth-client.ts';
import { contextFor, screenshots, violations, WIDTHS } from './support/pages-in-chromium.ts';

const SHOTS = 'sqlite/sign-in';
const CLIENT_REDIRECT = 'http://127.0.0.1:8976/callback';

describe('the mailed sign-in link in Chromium', { skip: skipWithoutChromium }, () => {
  let t: TestApp;
  let chromium: Browser;
  before(async () => {
    t = await startTestApp({ limits: { anonymousPerMinute: 10_000 } });
    chromium = await launchChromium();
  });
  after(async () => {
    await chromium?.close();
    await t?.close();
  });

  const newPage = async () =>
    (await contextFor(t, (options) => chromium.newContext(options), undefined)).newPage();

  /** The newest link in the dev outbox, as the mail shows it (with its `next`). */
  async function mailedLink(): Promise<string> {
    const outbox = await (await fetch(t.baseUrl + outboxPath(t.deps))).text();
    const match = outbox.match(/http:\/\/\S+\/signin\/confirm\?\S+?(?=<|\s)/);
    assert.ok(match, 'a link in the outbox');
    return match[0].replace(/&amp;/g, '&');
  }

  /** The sign-in form at `start` filled and sent on `page`; the link it mailed. */
  async function askForLink(page: Page, email: string, start = '/signin'): Promise<string> {
    await page.goto(t.baseUrl + start);
    await page.fill('#email', email);
    await page.getByRole('button', { name: 'Send me a link' }).click();
    await page.getByRole('heading', { name: 'Check your mail' }).waitFor();
    return mailedLink();
  }

  async function axeClean(page: Page, label: string) {
    for (const [width, size] of Object.entries(WIDTHS)) {
      await page.setViewportSize(size);
      assert.deepEqual(await violations(page), [], `${label} at ${width} width`);
    }
  }

  const linkRow = (link: string) =>
    t.deps.db
      .selectFrom('sign_in_links')
      .select('used_at')
      .where('id_hash', '=', sha256(new URL(link).searchParams.get('link')!))
      .executeTakeFirstOrThrow();

  test('the browser that asked: one step from the link to `next`, signed in; a scanner before it spent nothing', async () => {
    const member = await t.member('member', 'Ines');
    const page = await newPage();
    const link = await askForLink(page, member.email, '/signin?next=%2Fmembership');
    await axeClean(page, 'check your mail');
    await screenshots(page, SHOTS, 'check-your-mail');
    const cookie = (await page.context().cookies()).find((c) => c.name === '__signin');
    assert.ok(
      cookie?.httpOnly && cookie.sameSite === 'Lax' && cookie.path === '/signin',
      JSON.stringify(cookie),
    );

    // A mail scanner fetches the link first: a plain GET, none of our cookies.
    const scanned = await fetch(link, { headers: { 'user-agent': 'MailScanner/2.0' } });
    assert.equal(scanned.status, 200);
    assert.match(await scanned.text(), /Finish signing in/);
    assert.equal((await linkRow(link)).used_at, null, "the scanner's GET spent nothing");

    await page.goto(link);
    assert.equal(new URL(page.url()).pathname, '/membership', 'landed where the member was going');
    await page.getByText('Ines').first().waitFor();
    assert.notEqual((await linkRow(link)).used_at, null, 'the link is spent');
    const cookies = await page.context().cookies();
    assert.ok(cookies.some((c) => c.name === '__session'));
    assert.ok(!cookies.some((c) => c.name === '__signin'), 'the asking cookie is dropped');
    await page.context().close();
  });

  test('another browser (no asking cookie): the confirm page, and the link still works after it; used, it says so', async () => {
    const member = await t.member('member', 'Jon');
    const asking = await newPage();
    const link = await askForLink(asking, member.email, '/signin?next=%2Fevents');
    const other = await newPage();
    await other.goto(link);
    await other.getByRole('heading', { name: 'Finish signing in' }).waitFor();
    assert.equal((await linkRow(link)).used_at, null, 'opening it spent nothing');
    await axeClean(other, 'confirm page');
    await screenshots(other, SHOTS, 'confirm');
    await other.getByRole('button', { name: 'Sign in' }).click();
    await other.waitForURL((url) => url.pathname === '/events');
    assert.ok((await other.context().cookies()).some((c) => c.name === '__session'));

    // Used: the asking browser is told at once; a third browser after its button.
    await asking.goto(link);
    await asking.getByRole('heading', { name: 'This link has expired or was already used' }).waitFor();
    await axeClean(asking, 'link used');
    await screenshots(asking, SHOTS, 'link-used');
    const third = await newPage();
    await third.goto(link);
    await third.getByRole('button', { name: 'Sign in' }).click();
    await third.getByRole('heading', { name: 'This link has expired or was already used' }).waitFor();
    assert.ok(!(await third.context().cookies()).some((c) => c.name === '__session'));
    for (const page of [asking, other, third]) await page.context().close();
  });

  test('an expired link in the asking browser: the clear answer, no session', async () => {
    const member = await t.member('member');
    const page = await newPage();
    const link = await askForLink(page, member.email);
    t.clock.advance(15 * 60_000 + 1);
    const answer = await page.goto(link);
    assert.equal(answer?.status(), 400);
    await page.getByRole('link', { name: 'Ask for a new one' }).waitFor();
    assert.ok(!(await page.context().cookies()).some((c) => c.name === '__session'));
    await page.context().close();
  });

  test("an agent's code: from its link, through sign-in, to its request with Approve the one click left", async () => {
    const member = await t.member('member', 'Kai');
    const started = await t.call('POST', '/api/agent/signup/start', {
      body: { scopes: ['read:public', 'events:rsvp', 'resources:book'], client_name: 'Trip planner' },
    });
    assert.equal(started.status, 200, started.text);
    const page = await newPage();
    await page.goto(started.body.verify_url_complete);
    await page.getByRole('heading', { name: 'Sign in first' }).waitFor();
    await page.getByRole('main').getByRole('link', { name: 'Sign in' }).click();
    await page.fill('#email', member.email);
    await page.getByRole('button', { name: 'Send me a link' }).click();
    await page.getByRole('heading', { name: 'Check your mail' }).waitFor();
    await page.goto(await mailedLink());

    await page.getByRole('heading', { name: 'An agent asks to act for you' }).waitFor();
    assert.equal(new URL(page.url()).searchParams.get('code'), started.body.user_code);
    assert.ok(
      await page.getByText(started.body.user_code, { exact: true }).isVisible(),
      'the code, to compare',
    );
    assert.ok(await page.getByText('Trip planner').isVisible(), 'who asks');
    assert.ok(await page.getByText('Book rooms and printers.').isVisible(), 'what the tier will not grant');
    const grant = () =>
      t.deps.db
        .selectFrom('device_grants')
        .select(['status', 'member_id'])
        .where('client_name', '=', 'Trip planner')
        .executeTakeFirstOrThrow();
    assert.equal((await grant()).status, 'pending', 'nothing is approved without the click');
    await axeClean(page, 'approval review');
    await screenshots(page, SHOTS, 'approval-from-link');
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('heading', { name: 'Approved' }).waitFor();
    assert.deepEqual(await grant(), { status: 'approved', member_id: member.id });
    await page.context().close();
  });

  test("an application's consent: from the authorization request, through sign-in, to Approve", async () => {
    const member = await t.member('member', 'Lea');
    const registered = await registerClient(t.baseUrl, {
      client_name: 'Notes app',
      redirect_uris: [CLIENT_REDIRECT],
    });
    assert.equal(registered.status, 201);
    const page = await newPage();
    // The application's own page, where the browser is sent back with the code.
    await page.context().route(`${CLIENT_REDIRECT}**`, (route) => route.fulfill({ body: 'back at the app' }));
    const params = new URLSearchParams({
      response_type: 'code',
      client_id: registered.body.client_id,
      redirect_uri: CLIENT_REDIRECT,
      scope: 'read:public membership:read',
      state: 'state-1',
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
    });
    await page.goto(`${t.baseUrl}/oauth/authorize?${params}`);
    await page.getByRole('heading', { name: 'Sign in first' }).waitFor();
    await page.getByRole('main').getByRole('link', { name: 'Sign in' }).click();
    await page.fill('#email', member.email);
    await page.getByRole('button', { name: 'Send me a link' }).click();
    await page.getByRole('heading', { name: 'Check your mail' }).waitFor();
    await page.goto(await mailedLink());

    await page.getByRole('heading', { name: 'An application asks to act for you' }).waitFor();
    assert.equal(new URL(page.url()).pathname, '/oauth/consent');
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.waitForURL((url) => url.href.startsWith(CLIENT_REDIRECT));
    const back = new URL(page.url()).searchParams;
    assert.ok(back.get('code'), 'the application got its code');
    assert.equal(back.get('state'), 'state-1');
    await page.context().close();
  });
});
