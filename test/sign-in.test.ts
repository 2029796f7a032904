import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { sha256 } from '../src/secrets.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { Browser, linkFromOutbox, outboxPath } from './support/browser.ts';
import { engines } from './support/databases.ts';

for (const engine of engines) {
  describe(`email sign-in (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine: engine.name });
    });
    after(() => t?.close());

    async function requestLink(browser: Browser, email: string) {
      await browser.request('GET', '/signin');
      return browser.request('POST', '/signin', { email, csrf: browser.csrf });
    }

    test('a member signs in through the link in the dev outbox, once, and signs out', async () => {
      const member = await t.member('member', 'Mina');
      const browser = new Browser(t.baseUrl);
      const sent = await requestLink(browser, member.email.toUpperCase());
      assert.equal(sent.status, 200);
      assert.match(sent.text, /Check your mail/);
      const asking = sent.headers.getSetCookie().find((line) => line.startsWith('__signin='));
      assert.ok(asking, 'the asking browser gets its cookie');
      assert.match(asking, /HttpOnly/);
      assert.match(asking, /SameSite=Lax/);
      assert.match(asking, /Path=\/signin;/);
      assert.match(asking, /Max-Age=900/);
      const outbox = await browser.request('GET', outboxPath(t.deps));
      const secret = linkFromOutbox(outbox.text);

      const stored = await t.deps.db.selectFrom('sign_in_links').selectAll().execute();
      assert.equal(stored.length, 1);
      assert.equal(stored[0].id_hash, sha256(secret));
      assert.equal(stored[0].email, member.email);
      assert.ok(!JSON.stringify(stored).includes(secret), 'the link secret is stored hashed only');
      const browserSecret = browser.cookies.get('__signin')!;
      assert.equal(stored[0].browser_hash, sha256(browserSecret), 'so is the asking browser');

      // Opened in the browser that asked: signed in by the GET itself.
      const done = await browser.request('GET', `/signin/confirm?link=${encodeURIComponent(secret)}`);
      assert.equal(done.status, 303);
      assert.equal(done.headers.get('location'), '/my-agents');
      assert.equal(done.headers.get('cache-control'), 'no-store');
      assert.equal(browser.cookies.get('__signin'), undefined, 'the asking cookie has done its work');
      const setCookie = done.headers.getSetCookie().find((line) => line.startsWith('__session='));
      assert.ok(setCookie);
      assert.match(setCookie, /HttpOnly/);
      assert.match(setCookie, /SameSite=Lax/);
      assert.doesNotMatch(setCookie, /Secure/, 'plain local http gets no Secure flag');
      const sessionId = browser.cookies.get('__session')!;
      const session = await t.deps.db
        .selectFrom('sessions')
        .selectAll()
        .where('id_hash', '=', sha256(sessionId))
        .executeTakeFirstOrThrow();
      assert.equal(session.member_id, member.id);

      const me = await t.call('GET', '/api/tier/me', { headers: { cookie: browser.cookieHeader } });
      assert.equal(me.status, 200);
      assert.equal(me.body.email, member.email);
      const home = await browser.request('GET', '/signin');
      assert.match(home.text, /signed in as <strong>Mina<\/strong>/);

      const again = new Browser(t.baseUrl);
      assert.equal((await again.request('GET', '/signin')).status, 200);
      const reuse = await again.request('POST', '/signin/confirm', { link: secret, csrf: again.csrf });
      assert.equal(reuse.status, 400, 'a link works once');
      const sessions = await t.deps.db.selectFrom('sessions').select('id_hash').execute();
      const reopened = await browser.request('GET', `/signin/confirm?link=${encodeURIComponent(secret)}`);
      assert.equal(reopened.status, 303, 'opened again in the browser it signed in, it goes on');
      assert.equal(reopened.headers.get('location'), '/my-agents');
      const resent = await browser.request('POST', '/signin/confirm', { link: secret, csrf: browser.csrf });
      assert.equal(resent.status, 303, 'sent again by the browser it signed in, it goes on');
      assert.equal(browser.cookies.get('__session'), sessionId, 'with the same session');
      assert.equal(
        (await t.deps.db.selectFrom('sessions').select('id_hash').execute()).length,
        sessions.length,
      );

      const out = await browser.request('POST', '/signout', { csrf: browser.csrf });
      assert.equal(out.status, 303);
      const revoked = await t.deps.db
        .selectFrom('sessions')
        .select('revoked_at')
        .where('id_hash', '=', sha256(sessionId))
        .executeTakeFirstOrThrow();
      assert.notEqual(revoked.revoked_at, null);
      const after = await t.call('GET', '/api/tier/me', { headers: { cookie: `__session=${sessionId}` } });
      assert.equal(after.status, 401, 'a signed-out session is refused server-side');
    });

    test('every form refuses a missing or wrong CSRF token', async () => {
      const member = await t.member('member');
      const browser = new Browser(t.baseUrl);
      await browser.request('GET', '/signin');
      const before = await t.deps.db.selectFrom('sign_in_links').select('id_hash').execute();
      for (const [path, form] of [
        ['/signin', { email: member.email }],
        ['/signin/confirm', { link: 'sil_whatever' }],
        ['/signout', {}],
      ] as const) {
        const missing = await browser.request('POST', path, form);
        assert.equal(missing.status, 403, `${path} without a token`);
        const wrong = await browser.request('POST', path, {
          ...form,
          csrf: 'csrf_forged_value_of_some_length',
        });
        assert.equal(wrong.status, 403, `${path} with a wrong token`);
        assert.match(wrong.text, /expired/);
      }
      const after = await t.deps.db.selectFrom('sign_in_links').select('id_hash').execute();
      assert.equal(after.length, before.length, 'no link was issued');
    });

    test("the forms' token is new at every sign-in: one from before it is refused after", async () => {
      const member = await t.member('member');
      const browser = new Browser(t.baseUrl);
      const signIn = async () => {
        await requestLink(browser, member.email);
        const secret = linkFromOutbox((await browser.request('GET', outboxPath(t.deps))).text);
        const done = await browser.request('POST', '/signin/confirm', { link: secret, csrf: browser.csrf });
        assert.equal(done.status, 303);
        await browser.request('GET', '/signin');
        return browser.csrf;
      };
      await browser.request('GET', '/signin');
      const beforeSignIn = browser.csrf;
      const first = await signIn();
      assert.notEqual(first, beforeSignIn);
      assert.equal(browser.cookies.get('__csrf'), undefined, 'the pre-session secret is dropped');
      const stale = await browser.request('POST', '/signout', { csrf: beforeSignIn });
      assert.equal(stale.status, 403);
      assert.match(stale.text, /This form has expired/);
      assert.equal((await browser.request('POST', '/signout', { csrf: first })).status, 303);
      const second = await signIn();
      assert.notEqual(second, first);
      assert.equal((await browser.request('POST', '/signout', { csrf: first })).status, 403);
      assert.equal((await browser.request('POST', '/signout', { csrf: second })).status, 303);
    });

    test('a scanner, a previewer or a prefetch opening the link spends nothing; the member still signs in', async () => {
      const member = await t.member('member', 'Sami');
      const browser = new Browser(t.baseUrl);
      await requestLink(browser, member.email);
      const secret = linkFromOutbox((await browser.request('GET', outboxPath(t.deps))).text);
      const path = `/signin/confirm?link=${encodeURIComponent(secret)}`;
      const unspent = async () =>
        (
          await t.deps.db
            .selectFrom('sign_in_links')
            .select('used_at')
            .where('id_hash', '=', sha256(secret))
            .executeTakeFirstOrThrow()
        ).used_at === null;
      // A mail scanner: a plain GET with none of our cookies, following redirects as it likes.
      const scanned = await fetch(t.baseUrl + path, { headers: { 'user-agent': 'LinkScanner/1.0' } });
      assert.equal(scanned.status, 200);
      assert.match(await scanned.text(), /Finish signing in/);
      assert.equal(scanned.headers.getSetCookie().filter((line) => line.startsWith('__session=')).length, 0);
      // Another cookie of ours (a pre-session CSRF secret) is not the asking browser's either.
      const stranger = new Browser(t.baseUrl);
      await stranger.request('GET', '/signin');
      assert.equal((await stranger.request('GET', path)).status, 200);
      // The asking browser's own speculative fetch is not the member opening the link.
      const prefetched = await fetch(t.baseUrl + path, {
        redirect: 'manual',
        headers: { cookie: browser.cookieHeader, 'sec-purpose': 'prefetch' },
      });
      assert.equal(prefetched.status, 200);
      assert.ok(await unspent(), 'nothing so far spent the link');

      const opened = await browser.request('GET', path);
      assert.equal(opened.status, 303);
      assert.ok(browser.cookies.get('__session'));
      assert.ok(!(await unspent()));
      const afterwards = await fetch(t.baseUrl + path);
      assert.equal(afterwards.status, 200, 'a scanner coming later sees the button, and nothing else');
      const replay = new Browser(t.baseUrl);
      await replay.request('GET', path);
      const reused = await replay.request('POST', '/signin/confirm', { link: secret, csrf: replay.csrf });
      assert.equal(reused.status, 400, 'still single-use');
    });

    test('asking twice from one browser: each link opens there in one step', async () => {
      const member = await t.member('member');
      const browser = new Browser(t.baseUrl);
      await requestLink(browser, member.email);
      const first = linkFromOutbox((await browser.request('GET', outboxPath(t.deps))).text);
      const cookie = browser.cookies.get('__signin');
      await requestLink(browser, member.email);
      const second = linkFromOutbox((await browser.request('GET', outboxPath(t.deps))).text);
      assert.notEqual(first, second);
      assert.equal(browser.cookies.get('__signin'), cookie, 'the same asking cookie, renewed');
      const opened = await browser.request('GET', `/signin/confirm?link=${encodeURIComponent(first)}`);
      assert.equal(opened.status, 303);
    });

    test('a link expires after 15 minutes', async () => {
      const member = await t.member('member');
      const browser = new Browser(t.baseUrl);
      await requestLink(browser, member.email);
      const secret = linkFromOutbox((await browser.request('GET', outboxPath(t.deps))).text);
      t.clock.advance(15 * 60_000 + 1);
      // The asking browser is told at once; any other gets the button, then the same answer.
      const opened = await browser.request('GET', `/signin/confirm?link=${encodeURIComponent(secret)}`);
      assert.equal(opened.status, 400);
      assert.match(opened.text, /This link has expired or was already used/);
      const late = await browser.request('POST', '/signin/confirm', { link: secret, csrf: browser.csrf });
      assert.equal(late.status, 400);
      assert.equal(browser.cookies.get('__session'), undefined);
      const elsewhere = new Browser(t.baseUrl);
      const page = await elsewhere.request('GET', `/signin/confirm?link=${encodeURIComponent(secret)}`);
      assert.equal(page.status, 200);
      const posted = await elsewhere.request('POST', '/signin/confirm', {
        link: secret,
        csrf: elsewhere.csrf,
      });
      assert.equal(posted.status, 400);
      assert.match(posted.text, /This link has expired or was already used/);
    });

    test('a first sign-in of an unknown email creates a public member while open sign-up is on', async () => {
      const browser = new Browser(t.baseUrl);
      const email = `newcomer-${Date.now()}@test.example`;
      await requestLink(browser, email);
      const secret = linkFromOutbox((await browser.request('GET', outboxPath(t.deps))).text);
      const done = await browser.request('GET', `/signin/confirm?link=${encodeURIComponent(secret)}`);
      assert.equal(done.status, 303);
      const member = await t.deps.db
        .selectFrom('members')
        .selectAll()
        .where('email', '=', email)
        .executeTakeFirst();
      assert.equal(member?.tier, 'public');
    });

    test('after signing in, the person returns to the page that sent them, never to another site', async () => {
      const member = await t.member('member');
      for (const [next, expected] of [
        ['/signup-with-agent?code=BCDF-GHJK', '/signup-with-agent?code=BCDF-GHJK'],
        // Another site is never a destination: the member lands on their own page instead.
        ['//evil.example/phish', '/my-agents'],
        ['https://evil.example/', '/my-agents'],
      ]) {
        const browser = new Browser(t.baseUrl);
        const form = await browser.request('GET', `/signin?next=${encodeURIComponent(next)}`);
        const carried = form.text.match(/name="next" value="([^"]*)"/)?.[1]?.replace(/&amp;/g, '&');
        await browser.request('POST', '/signin', {
          email: member.email,
          next: carried ?? '',
          csrf: browser.csrf,
        });
        const outbox = (await browser.request('GET', outboxPath(t.deps))).text;
        const url = new URL(
          outbox.match(/http:\/\/\S+\/signin\/confirm\?\S+?(?=<|\s)/)![0].replace(/&amp;/g, '&'),
        );
        // Opened on another device (without the asking cookie): through the confirm button.
        browser.cookies.delete('__signin');
        const confirm = await browser.request('GET', url.pathname + url.search);
        const nextField =
          confirm.text.match(/name="next" value="([^"]*)"/)?.[1]?.replace(/&amp;/g, '&') ?? '';
        const done = await browser.request('POST', '/signin/confirm', {
          link: url.searchParams.get('link')!,
          next: nextField,
          csrf: browser.csrf,
        });
        assert.equal(done.status, 303);
        assert.equal(done.headers.get('location'), expected, next);
      }
      const anonymous = await fetch(`${t.baseUrl}/signup-with-agent?code=BCDF-GHJK`);
      assert.match(await anonymous.text(), /href="\/signin\?next=%2Fsignup-with-agent%3Fcode%3DBCDF-GHJK"/);
    });

    /** Every `next` a person or a hand-made link could bring: non-Latin-1, controls, other hosts, encodings. */
    const hostileNexts = [
      '/日本語?q=€',
      '/événements',
      '/\u0100',
      '/emoji/😀#📎',
      '/\u0000x',
      '/a\u0007b',
      '/\r\nset-cookie: x=y',
      '/%0d%0aset-cookie:%20x=y',
      '/\tfoo',
      '/\u2028',
      '/\ud800',
      '/\u007f',
      '//evil.example',
      '/\\evil.example',
      '\\\\evil.example',
      '/\\/evil.example',
      '/.//evil.example',
      '/./\\evil.example',
      '/\n/evil.example',
      '/\t/evil.example',
      ' //evil.example',
      '/%2F%2Fevil.example',
      '%2F%2Fevil.example',
      'https://evil.example/',
      'javascript:alert(1)',
      '/javascript:alert(1)',
      `/${'x'.repeat(5000)}`,
      `/${'é'.repeat(400)}`,
      '/ok?next=//evil.example',
      '/%E2%82%AC',
      '/%ZZ',
      '',
      '/',
      ...fc
        .sample(fc.string({ unit: 'binary', maxLength: 40 }), { numRuns: 12, seed: 7 })
        .map((s) => `/${s}`),
    ];
    const hiddenNext = (page: string) =>
      (page.match(/name="next" value="([^"]*)"/)?.[1] ?? '')
        .replace(/&quot;/g, '"')
        .replace(/&#39;/g, "'")
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>')
        .replace(/&amp;/g, '&');

    /**
     * The flow a person goes through with `raw` as `next`, up to the mailed link, and, opened
     * elsewhere than in the asking browser, its confirm page.
     */
    async function toConfirmPage(
      email: string,
      raw: string,
      opened: 'asking browser' | 'elsewhere' = 'elsewhere',
    ) {
      const browser = new Browser(t.baseUrl);
      const form = await browser.request('GET', `/signin?${new URLSearchParams({ next: raw })}`);
      assert.equal(form.status, 200);
      const sent = await browser.request('POST', '/signin', {
        email,
        next: hiddenNext(form.text),
        csrf: browser.csrf,
      });
      assert.equal(sent.status, 200);
      const outbox = (await browser.request('GET', outboxPath(t.deps))).text;
      const url = new URL(
        outbox.match(/http:\/\/\S+\/signin\/confirm\?\S+?(?=<|\s)/)![0].replace(/&amp;/g, '&'),
      );
      const path = url.pathname + url.search;
      if (opened === 'asking browser')
        return { browser, link: url.searchParams.get('link')!, path, next: '' };
      // Opened on another device: the same browser without the asking cookie, so the confirm button.
      browser.cookies.delete('__signin');
      const confirm = await browser.request('GET', path);
      assert.equal(confirm.status, 200);
      return { browser, link: url.searchParams.get('link')!, path, next: hiddenNext(confirm.text) };
    }

    test('any `next`, through the whole sign-in: never a 5xx, never another site, and signed in at the end', async () => {
      const member = await t.member('member', 'Nora');
      for (const raw of hostileNexts) {
        // The confirm form as the page gave it, and as a hand-made form might send it.
        for (const carried of ['page', 'raw'] as const) {
          const label = `${JSON.stringify(raw.slice(0, 60))} (${carried})`;
          const { browser, link, next } = await toConfirmPage(member.email, raw);
          const form = { link, next: carried === 'page' ? next : raw, csrf: browser.csrf };
          const done = await browser.request('POST', '/signin/confirm', form);
          assert.equal(done.status, 303, `${label}: ${done.text.slice(0, 300)}`);
          const location = done.headers.get('location') ?? '';
          assert.equal(new URL(location, t.baseUrl).origin, t.baseUrl, `${label} -> ${location}`);
          assert.match(location, /^\/(?![/\\])[\x21-\x7e]*$/, `${label} -> ${location}`);
          const landed = await browser.request('GET', '/signin');
          assert.match(landed.text, /signed in as <strong>Nora<\/strong>/, label);
        }
      }
    });

    test('any `next`, opened in the asking browser: signed in by the GET, never a 5xx, never another site', async () => {
      const member = await t.member('member', 'Noor');
      for (const raw of hostileNexts) {
        const label = JSON.stringify(raw.slice(0, 60));
        const { browser, path } = await toConfirmPage(member.email, raw, 'asking browser');
        const done = await browser.request('GET', path);
        assert.equal(done.status, 303, `${label}: ${done.text.slice(0, 300)}`);
        const location = done.headers.get('location') ?? '';
        assert.equal(new URL(location, t.baseUrl).origin, t.baseUrl, `${label} -> ${location}`);
        assert.match(location, /^\/(?![/\\])[\x21-\x7e]*$/, `${label} -> ${location}`);
        const landed = await browser.request('GET', '/signin');
        assert.match(landed.text, /signed in as <strong>Noor<\/strong>/, label);
      }
    });

    test('the same confirm form sent again by the browser it signed in lands where the first would have', async () => {
      const member = await t.member('member', 'Odile');
      const { browser, link, next } = await toConfirmPage(member.email, '/membership');
      const form = { link, next, csrf: browser.csrf };
      const first = await browser.request('POST', '/signin/confirm', form);
      assert.equal(first.status, 303);
      const again = await browser.request('POST', '/signin/confirm', form);
      assert.equal(again.status, 303, again.text);
      assert.equal(again.headers.get('location'), '/membership');

      const stranger = await toConfirmPage((await t.member('member')).email, '/membership');
      const elsewhere = await stranger.browser.request('POST', '/signin/confirm', {
        ...form,
        csrf: stranger.browser.csrf,
      });
      assert.equal(elsewhere.status, 400, 'another browser cannot reuse the spent link');
      assert.equal(stranger.browser.cookies.get('__session'), undefined);
    });

    test('a bad email address is a 400 page', async () => {
      const browser = new Browser(t.baseUrl);
      const bad = await requestLink(browser, 'not an address');
      assert.equal(bad.status, 400);
    });
  });
}

describe('page forms under bad input', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t?.close());

  test('malformed, oversize, mistyped or repeated fields get a 4xx and issue nothing', async () => {
    const browser = new Browser(t.baseUrl);
    await browser.request('GET', '/signin');
    const post = (body: string, type = 'application/x-www-form-urlencoded') =>
      fetch(`${t.baseUrl}/signin`, {
        method: 'POST',
        headers: { cookie: browser.cookieHeader, 'content-type': type },
        body,
      });
    const csrf = encodeURIComponent(browser.csrf);
    const cases: [string, Response, number][] = [
      ['oversize form', await post(`email=${'a'.repeat(40_000)}&csrf=${csrf}`), 413],
      ['malformed JSON', await post('{bad', 'application/json'), 400],
      ['text/plain', await post('email=a@b.c', 'text/plain'), 415],
      ['two emails', await post(`email=a@b.c&email=d@e.f&csrf=${csrf}`), 400],
      ['two CSRF fields', await post(`email=a@b.c&csrf=${csrf}&csrf=${csrf}`), 403],
      ['bad percent-encoding', await post(`email=%ZZ&csrf=${csrf}`), 400],
      ['no fields at all', await post(''), 403],
    ];
    for (const [label, response, status] of cases) {
      assert.equal(response.status, status, label);
      const text = await response.text();
      assert.ok(text.length > 0, `${label} explains itself`);
    }
    assert.equal((await t.deps.db.selectFrom('sign_in_links').selectAll().execute()).length, 0);
    const prototype = await post(
      `__proto__=x&constructor=y&email=${encodeURIComponent('a@b.c')}&csrf=${csrf}`,
    );
    assert.equal(prototype.status, 200, 'odd field names are plain fields');
  });
});

describe('email sign-in with open sign-up off', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ config: { openSignup: false } });
  });
  after(() => t?.close());

  test('an unknown email gets the same page and no link, and no member is created', async () => {
    const browser = new Browser(t.baseUrl);
    await browser.request('GET', '/signin');
    const email = 'stranger@test.example';
    const sent = await browser.request('POST', '/signin', { email, csrf: browser.csrf });
    assert.equal(sent.status, 200);
    assert.match(sent.text, /Check your mail/);
    assert.equal((await t.deps.db.selectFrom('sign_in_links').selectAll().execute()).length, 0);
    const outbox = await browser.request('GET', outboxPath(t.deps));
    assert.doesNotMatch(outbox.text, /signin\/confirm/);
    const member = await t.deps.db
      .selectFrom('members')
      .select('id')
      .where('email', '=', email)
      .executeTakeFirst();
    assert.equal(member, undefined);
  });
});
