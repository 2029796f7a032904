import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from './support/app.ts';
import { Browser } from './support/browser.ts';
import { SmtpSink } from './support/smtp-sink.ts';

describe('sign-in mail over SMTP', () => {
  const sink = new SmtpSink();
  let t: TestApp;
  const logs: string[] = [];
  before(async () => {
    await sink.start();
    const logStream = new PassThrough();
    logStream.setEncoding('utf8').on('data', (line: string) => logs.push(line));
    t = await startTestApp({
      config: { smtpUrl: sink.url, mailFrom: 'Commons <signin@commons.test>' },
      logStream,
    });
  });
  after(async () => {
    await t?.close();
    await sink.stop();
  });

  test('the link goes out through the SMTP server, and it signs the member in', async () => {
    const member = await t.member('member', 'Mail Reader');
    const browser = new Browser(t.baseUrl);
    await browser.request('GET', '/signin');
    const sent = await browser.request('POST', '/signin', { email: member.email, csrf: browser.csrf });
    assert.equal(sent.status, 200);
    assert.doesNotMatch(sent.text, /development outbox/);
    assert.equal(
      (await browser.request('GET', '/dev/outbox')).status,
      404,
      'no outbox when SMTP is configured',
    );
    const mail = await sink.waitFor(member.email);
    assert.equal(mail.from, 'signin@commons.test');
    assert.match(mail.data, /^Subject: Your sign-in link for agent-commons$/m);
    const unfolded = mail.data.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
    const link = /\/signin\/confirm\?link=([A-Za-z0-9_%-]+)/.exec(unfolded)?.[1];
    assert.ok(link, 'the mail carries the link');
    const done = await browser.request('POST', '/signin/confirm', {
      link: decodeURIComponent(link),
      csrf: browser.csrf,
    });
    assert.equal(done.status, 303);
    const sessions = await t.deps.db
      .selectFrom('sessions')
      .selectAll()
      .where('member_id', '=', member.id)
      .execute();
    assert.equal(sessions.length, 1);
    assert.ok(!logs.join('').includes(decodeURIComponent(link)), 'the link never reaches the log');
  });

  test('an unreachable mail server gets the same answer as a stranger; the failure is logged without the link', async () => {
    await sink.stop();
    const member = await t.member('member');
    const browser = new Browser(t.baseUrl);
    await browser.request('GET', '/signin');
    const response = await browser.request('POST', '/signin', { email: member.email, csrf: browser.csrf });
    assert.equal(response.status, 200);
    assert.match(response.text, /Check your mail/);
    const deadline = Date.now() + 5000;
    while (!logs.join('').includes('sign-in mail not sent')) {
      assert.ok(Date.now() < deadline, 'the failed send is logged');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const line = logs
      .join('')
      .split('\n')
      .find((l) => l.includes('sign-in mail not sent'))!;
    assert.doesNotMatch(line, /link=/);
    await sink.start();
  });
});
