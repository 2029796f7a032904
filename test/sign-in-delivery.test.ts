// How sign-in links are delivered (issue: the dev outbox was readable by anyone who could reach the
// server). Only the person at the server's terminal can open the outbox, only on a local deployment;
// a public deployment with no way to deliver links refuses to start.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../src/config.ts';
import { createDeps } from '../src/deps.ts';
import { SignInUndeliverable } from '../src/domain/auth/sign-in-mail.ts';
import { freePort, startTestApp, type TestApp } from './support/app.ts';
import { Browser, linkFromOutbox } from './support/browser.ts';
import { freshDatabase } from './support/databases.ts';
import { killAllChildren, runCli, startServer } from './support/processes.ts';

describe('sign-in delivery', () => {
  after(killAllChildren);

  describe('a local development server (no SMTP_URL, host and public URL on loopback)', () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp();
    });
    after(() => t?.close());

    test("an operator's link cannot be read without the outbox key, and can with it", async () => {
      const operator = await t.member('operator', 'Olga');
      const browser = new Browser(t.baseUrl);
      await browser.request('GET', '/signin');
      const sent = await browser.request('POST', '/signin', { email: operator.email, csrf: browser.csrf });
      assert.equal(sent.status, 200);
      assert.doesNotMatch(sent.text, /href="\/dev\/outbox/, 'the page gives no way into the outbox');
      const stored = await t.deps.db.selectFrom('sign_in_links').select('id_hash').execute();
      assert.equal(stored.length, 1, 'a link was issued');

      const unknownPath = await t.call('GET', '/no-such-page');
      for (const path of [
        '/dev/outbox',
        '/dev/outbox?key=',
        '/dev/outbox?key=wrong',
        `/dev/outbox?key=${'A'.repeat(24)}`,
      ]) {
        const anonymous = await t.call('GET', path);
        assert.equal(anonymous.status, 404, path);
        assert.doesNotMatch(anonymous.text, /signin\/confirm/, path);
        assert.deepEqual(
          anonymous.body?.error?.code,
          unknownPath.body?.error?.code,
          'looks like any unknown path',
        );
      }

      const key = t.deps.mailer.outbox!.key;
      const owner = await t.call('GET', `/dev/outbox?key=${key}`);
      assert.equal(owner.status, 200);
      assert.equal(owner.headers.get('cache-control'), 'no-store');
      const secret = linkFromOutbox(owner.text);
      const confirmed = await browser.request('POST', '/signin/confirm', {
        link: secret,
        csrf: browser.csrf,
      });
      assert.equal(confirmed.status, 303);
      assert.ok(browser.cookies.get('__session'), 'the owner of the terminal signs in');
    });
  });

  test('`serve` says in one line how sign-in is delivered, and the key it prints opens the outbox', async () => {
    const database = await freshDatabase('sqlite');
    try {
      // A port chosen before the start: the outbox link it prints is built from the public URL,
      // which must name the port the server listens on (with port 0 it would name port 0).
      const server = await startServer(database.url, { port: await freePort(), args: ['--no-seed'] });
      const lines = server
        .stdout()
        .split('\n')
        .filter((line) => line.startsWith('sign-in:'));
      assert.equal(lines.length, 1, server.stdout());
      assert.match(
        lines[0],
        /development outbox.*for production set SMTP_URL \(mail\) or OIDC_ISSUER and OIDC_CLIENT_ID/,
      );
      const printed = lines[0].match(/(http:\/\/\S+\/dev\/outbox\?key=[\w-]+)/)![1];
      assert.ok(printed.startsWith(server.baseUrl));
      const opened = await fetch(printed);
      assert.equal(opened.status, 200);
      assert.match(await opened.text(), /Dev outbox/);
      assert.equal((await fetch(`${server.baseUrl}/dev/outbox`)).status, 404);
      await server.kill('SIGTERM');
    } finally {
      await database.drop();
    }
  });

  test('a public deployment with neither SMTP nor single sign-on refuses to start, saying what to set', async () => {
    const database = await freshDatabase('sqlite');
    try {
      const publicDeployments: Record<string, string>[] = [
        { HOST: '0.0.0.0' },
        { HOST: '127.0.0.1', PUBLIC_URL: 'https://commons.example.org' },
      ];
      for (const env of publicDeployments) {
        const config = loadConfig({ ...env, DATABASE_URL: database.url });
        await assert.rejects(createDeps(config), SignInUndeliverable);
        const run = await runCli(database.url, ['serve', '--no-seed'], {
          env: { ...env, PORT: '0' },
          timeoutMs: 30_000,
        });
        assert.equal(run.code, 1, run.stderr);
        assert.match(run.stderr, /cannot start: sign-in links cannot be delivered.*Set one of them/);
        assert.doesNotMatch(run.stderr, /at .*\.ts:\d+/, 'a sentence, not a stack trace');
      }
    } finally {
      await database.drop();
    }
  });

  describe('a public deployment with single sign-on and no mail server', () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({
        config: {
          // Served on every interface (the helper still listens on loopback for the test itself).
          host: '0.0.0.0',
          oidc: { issuer: 'https://id.example.org', clientId: 'commons', label: 'Sign in with Example ID' },
        },
      });
    });
    after(() => t?.close());

    test('offers single sign-on only: no email form, no link issued, no outbox', async () => {
      assert.equal(t.deps.mailer.delivery, 'oidc-only');
      const browser = new Browser(t.baseUrl);
      const page = await browser.request('GET', '/signin');
      assert.equal(page.status, 200);
      assert.match(page.text, /Sign in with Example ID/);
      assert.doesNotMatch(page.text, /name="email"/);
      const member = await t.member('member');
      const posted = await browser.request('POST', '/signin', { email: member.email, csrf: browser.csrf });
      assert.equal(posted.status, 404);
      assert.match(posted.text, /Email sign-in is off here/);
      assert.equal((await t.deps.db.selectFrom('sign_in_links').selectAll().execute()).length, 0);
      assert.equal((await t.call('GET', '/dev/outbox')).status, 404);
      assert.equal(t.deps.mailer.outbox, undefined);
    });
  });
});
