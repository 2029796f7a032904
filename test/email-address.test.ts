import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { normalizeEmail } from '../src/domain/members/members.ts';
import { a2aClient, errorBody } from './support/a2a.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { Browser, signInThroughOutbox } from './support/browser.ts';
import { killAllChildren, runCli } from './support/processes.ts';

const ACCEPTED: [string, string][] = [
  ['ada@example.org', 'ada@example.org'],
  ['  Ada.Lovelace@Example.ORG ', 'ada.lovelace@example.org'],
  ["o'brien+lists@mail.example.co.uk", "o'brien+lists@mail.example.co.uk"],
  ['a!#$%&*/=?^_`{|}~-@x.org', 'a!#$%&*/=?^_`{|}~-@x.org'],
  ['x@xn--bcher-kva.example', 'x@xn--bcher-kva.example'],
  ['x@a-b.c0', 'x@a-b.c0'],
  [`${'l'.repeat(64)}@${'d'.repeat(63)}.org`, `${'l'.repeat(64)}@${'d'.repeat(63)}.org`],
];

const REFUSED = [
  '::::@x.org',
  'a:b@x.org',
  '"quoted"@x.org',
  'a b@x.org',
  '.a@x.org',
  'a.@x.org',
  'a..b@x.org',
  '@x.org',
  'a@',
  'a',
  'a@b@x.org',
  'a@x',
  'a@localhost',
  'a@.x.org',
  'a@x..org',
  'a@x.org.',
  'a@-x.org',
  'a@x-.org',
  'a@x_y.org',
  'a@1.2.3.4',
  'a@[127.0.0.1]',
  'a@[IPv6:::1]',
  'a@bücher.example',
  'ädä@x.org',
  'a@x.org\nb@y.org',
  `${'l'.repeat(65)}@x.org`,
  `a@${'d'.repeat(64)}.org`,
  `a@${'d.'.repeat(125)}org`,
  '',
];

test('an address is a dot-atom local part at a domain of two or more valid labels', () => {
  for (const [raw, kept] of ACCEPTED) assert.equal(normalizeEmail(raw), kept, raw);
  for (const raw of REFUSED) assert.equal(normalizeEmail(raw), undefined, JSON.stringify(raw));
  for (const raw of [undefined, null, 42, ['a@x.org'], { email: 'a@x.org' }]) {
    assert.equal(normalizeEmail(raw), undefined);
  }
});

describe('every door that takes an address refuses a malformed one', () => {
  let t: TestApp;
  let operator: Browser;
  let operatorId: string;
  let token: string;
  const { send } = a2aClient(() => t);
  before(async () => {
    t = await startTestApp({ engine: 'sqlite' });
    const olga = await t.member('operator', 'Olga');
    operatorId = olga.id;
    token = await t.token(olga, ['admin:tier_review']);
    operator = await signInThroughOutbox(t, olga.email);
  });
  after(async () => {
    await killAllChildren();
    await t?.close();
  });

  const members = async (email: string) =>
    (await t.deps.db.selectFrom('members').select('id').where('email', '=', email).execute()).length;

  test('the sign-in form answers 400 and issues no link', async () => {
    const browser = new Browser(t.baseUrl);
    await browser.request('GET', '/signin');
    for (const email of ['::::@x.org', 'a..b@x.org', 'a@x']) {
      const page = await browser.request('POST', '/signin', { email, csrf: browser.csrf });
      assert.equal(page.status, 400, email);
      assert.match(page.text, /That is not an email address/);
    }
    const links = await t.deps.db.selectFrom('sign_in_links').select('email').execute();
    assert.ok(
      links.every((link) => !/::::|\.\.|@x$/.test(link.email)),
      'no link for a refused address',
    );
  });

  test('the operator console, MCP and A2A refuse the invitation with validation_failed on email', async () => {
    const page = await operator.request('POST', '/operator/members/invite', {
      email: '::::@x.org',
      name: 'Colon',
      csrf: operator.csrf,
    });
    assert.equal(page.status, 400, page.text);
    assert.match(page.text, /is not an email address/);

    const mcp = await fetch(`${t.baseUrl}/api/mcp`, {
      method: 'POST',
      headers: {
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
        authorization: `Bearer ${token}`,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'ic_admin_member_invite',
          arguments: { email: '::::@x.org', name: 'Colon', confirm: true },
        },
      }),
    });
    const tool = (await mcp.json()).result;
    assert.equal(tool.isError, true, JSON.stringify(tool));
    assert.equal(tool.structuredContent.error, 'validation_failed', JSON.stringify(tool));
    assert.equal(tool.structuredContent.field, 'email', JSON.stringify(tool));

    const a2a = await send(
      'ic_admin_member_invite',
      { email: '::::@x.org', name: 'Colon', confirm: true },
      token,
    );
    const refusal = errorBody(a2a.body.error?.data);
    assert.equal(refusal?.error, 'validation_failed', a2a.text);
    assert.equal(await members('::::@x.org'), 0);
  });

  test('member create on the CLI exits 1 with one line and creates nothing', async () => {
    const run = await runCli(t.database.url, [
      'member',
      'create',
      '--email',
      '::::@x.org',
      '--name',
      'Colon',
    ]);
    assert.equal(run.code, 1, run.stderr);
    assert.equal(run.stdout, '');
    assert.match(run.stderr, /"::::@x\.org" is not an email address/);
    assert.doesNotMatch(run.stderr, /\n\s+at /, 'no stack trace');
    const byColon = await runCli(t.database.url, [
      'member',
      'set-tier',
      operatorId,
      'core',
      '--by',
      '::::@x.org',
    ]);
    assert.equal(byColon.code, 1);
    assert.match(byColon.stderr, /no member ::::@x\.org/);
    assert.equal(await members('::::@x.org'), 0);
  });
});
