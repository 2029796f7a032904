// /docs from the registry: every operation has its section, anchor and calls to copy; the calls'
// inputs pass the operations' own validation; some of the printed commands are run, as printed,
// against the app on a real port; and the page is sent from kept bytes, gzipped to who takes gzip.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { createSession, SESSION_COOKIE } from '../src/domain/auth/sessions.ts';
import { validateInput } from '../src/operations/pipeline/validate.ts';
import { OPERATIONS } from '../src/operations/registry.ts';
import { isRestOperation } from '../src/operations/types.ts';
import { exampleInput, TOKEN_PLACEHOLDER } from '../src/surfaces/call-examples.ts';
import { startTestApp, type TestApp } from './support/app.ts';

const unescapeHtml = (text: string) =>
  text
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

/** The text of the block with this id, as a reader copies it. */
function block(page: string, id: string): string {
  const found = new RegExp(`<code id="${id}">([^<]*)</code>`).exec(page)?.[1];
  assert.ok(found !== undefined, `no block ${id}`);
  return unescapeHtml(found);
}

/** The command's words as the shell reads them (the examples quote with single quotes only). */
function words(command: string): string[] {
  return [...command.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g)].map((match) =>
    match[1] !== undefined ? match[1].replaceAll("'\\''", "'") : match[2],
  );
}

/**
 * Runs a printed curl command: through the shell with curl where it is installed, else as the same
 * request read from its words (URL, -X, -H, -b, -d). Answers the parsed JSON.
 */
async function run(command: string): Promise<any> {
  assert.match(command, /^curl -sS /);
  if (existsSync('/usr/bin/curl')) {
    const { stdout } = await promisify(execFile)('/bin/sh', ['-c', command], { timeout: 10_000 });
    return JSON.parse(stdout);
  }
  const list = words(command);
  const headers: Record<string, string> = { accept: '*/*' };
  let url = '';
  let method = 'GET';
  let body: string | undefined;
  for (let i = 1; i < list.length; i++) {
    const word = list[i];
    if (word === '-X') method = list[++i];
    else if (word === '-H') {
      const [name, ...value] = list[++i].split(':');
      headers[name.trim().toLowerCase()] = value.join(':').trim();
    } else if (word === '-b') headers.cookie = list[++i];
    else if (word === '-d') body = list[++i];
    else if (!word.startsWith('-')) url = word;
  }
  return (await fetch(url, { method, headers, body })).json();
}

describe('/docs: generated from the registry, and its examples work', () => {
  let t: TestApp;
  let page: string;
  before(async () => {
    t = await startTestApp();
    page = await (await fetch(`${t.baseUrl}/docs`)).text();
  });
  after(() => t?.close());

  test('every operation has a section, a table-of-contents anchor and a curl example; every tool its MCP and A2A calls', () => {
    const sections = [...page.matchAll(/<section class="op" id="([^"]+)"/g)].map((match) => match[1]);
    assert.deepEqual(sections.sort(), OPERATIONS.map((op) => op.id).sort());
    for (const op of OPERATIONS) {
      assert.ok(page.includes(`<li data-op="${op.id}"><a href="#${op.id}">`), `${op.id} in the contents`);
      const curl = block(page, `${op.id}-curl`);
      assert.match(curl, /^curl -sS /, op.id);
      if (isRestOperation(op)) assert.ok(curl.includes(`${t.baseUrl}${op.path}`), `${op.id}: ${curl}`);
      else assert.ok(curl.includes(`${t.baseUrl}/api/mcp`), `${op.id}: ${curl}`);
      if (op.credential === 'bearer')
        assert.ok(curl.includes(`Authorization: Bearer ${TOKEN_PLACEHOLDER}`), op.id);
      if (op.mcpTool) {
        const call = JSON.parse(block(page, `${op.id}-mcp`));
        assert.equal(call.method, 'tools/call');
        assert.equal(call.params.name, op.mcpTool);
        assert.match(block(page, `${op.id}-a2a`), new RegExp(`"capability":"${op.mcpTool}"`));
      }
    }
    for (const tag of new Set(OPERATIONS.map((op) => op.tag)))
      assert.ok(page.includes(`<section class="tag-group" id="tag-${tag}"`), tag);
    const ids = [...page.matchAll(/\sid="([^"]+)"/g)].map((match) => match[1]);
    assert.deepEqual(
      ids.filter((id, i) => ids.indexOf(id) !== i),
      [],
      'ids are unique',
    );
    // Every answer's code links to its row in the error table.
    for (const [, code] of page.matchAll(/href="#error-([a-z_0-9]+)"/g))
      assert.ok(page.includes(`<tr id="error-${code}">`), code);
  });

  test('every example input passes its operation’s own validation', () => {
    for (const op of OPERATIONS) {
      assert.doesNotThrow(
        () => validateInput(op.input, exampleInput(op), op.inputFrom === 'query'),
        `${op.id}: ${JSON.stringify(exampleInput(op))}`,
      );
    }
  });

  test('the anonymous curl calls work as printed: the events list, MCP tools/list and a public tool, A2A', async () => {
    const events = await run(block(page, 'listUpcomingEvents-curl'));
    assert.ok(Array.isArray(events.events), JSON.stringify(events));
    const list = await run(block(page, 'mcp-tools-list'));
    assert.ok(list.result.tools.some((tool: { name: string }) => tool.name === 'ic_events_list_upcoming'));
    const upcoming = await run(block(page, 'listUpcomingEvents-mcp-curl'));
    assert.equal(upcoming.result.isError, undefined, JSON.stringify(upcoming));
    assert.ok(Array.isArray(upcoming.result.structuredContent.events));
    const health = await run(block(page, 'agentHealth-curl'));
    assert.equal(health.result.isError, undefined, JSON.stringify(health));
    const a2a = await run(block(page, 'listUpcomingEvents-a2a'));
    assert.equal(a2a.result.task.status.state, 'TASK_STATE_COMPLETED', JSON.stringify(a2a));
    // The device flow's first call, with the body made of its schema's declared examples.
    const started = await run(block(page, 'startSignup-curl'));
    assert.match(started.device_code ?? '', /\S{16,}/, JSON.stringify(started));
  });

  test('a bearer call works as printed once the token is put in: REST, MCP and A2A', async () => {
    const member = await t.member('member', 'Ada');
    const token = await t.token(member, ['membership:read']);
    const withToken = (id: string) => block(page, id).replace(TOKEN_PLACEHOLDER, token);
    const rest = await run(withToken('getMyActivity-curl'));
    assert.equal(rest.ok, true, JSON.stringify(rest));
    const mcp = await run(withToken('getMyActivity-mcp-curl'));
    assert.equal(mcp.result.isError, undefined, JSON.stringify(mcp));
    const a2a = await run(withToken('getMyActivity-a2a'));
    assert.equal(a2a.result.task.status.state, 'TASK_STATE_COMPLETED', JSON.stringify(a2a));
  });

  test('descriptions show their Markdown rendered: no backtick is left in the text', () => {
    const text = unescapeHtml(
      page
        .replace(/<pre>[\s\S]*?<\/pre>/g, '')
        .replace(/<script[\s\S]*?<\/script>/g, '')
        .replace(/<[^>]+>/g, ''),
    );
    assert.doesNotMatch(text, /`/);
    assert.ok(page.includes('Poll every <code>interval</code> seconds'));
    // A call the prose names in passing links to its section.
    assert.ok(page.includes('a withdrawn RSVP (<a href="#cancelRsvp">POST /api/events/rsvp/cancel</a>)'));
  });

  test('sent from kept bytes: gzipped to a client that takes gzip, plain otherwise; a member sees their name', async () => {
    const gz = await fetch(`${t.baseUrl}/docs`, { headers: { 'accept-encoding': 'gzip' } });
    // fetch decompresses; the raw answer is read through node:http below.
    assert.equal(gz.headers.get('content-encoding'), 'gzip');
    assert.match(gz.headers.get('vary') ?? '', /accept-encoding/);
    assert.match(gz.headers.get('content-security-policy') ?? '', /script-src 'self'/);
    assert.equal(await gz.text(), page);
    const raw = await new Promise<Buffer>((resolve, reject) => {
      import('node:http').then(({ get }) =>
        get(`${t.baseUrl}/docs`, { headers: { 'accept-encoding': 'gzip' } }, (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk) => chunks.push(chunk));
          response.on('end', () => resolve(Buffer.concat(chunks)));
        }).on('error', reject),
      );
    });
    assert.ok(raw.length < page.length / 5, `gzipped ${raw.length} of ${page.length}`);
    assert.equal(gunzipSync(raw).toString(), page);
    const plain = await fetch(`${t.baseUrl}/docs`, { headers: { 'accept-encoding': 'identity' } });
    assert.equal(plain.headers.get('content-encoding'), null);
    assert.equal(await plain.text(), page);
    assert.ok(page.includes('<a href="/signin?next=%2Fdocs">Sign in</a>'));

    const member = await t.member('member', 'Grace Hopper');
    const session = await createSession(t.deps.db, t.clock, member.id);
    const signedIn = await (
      await fetch(`${t.baseUrl}/docs`, { headers: { cookie: `${SESSION_COOKIE}=${session}` } })
    ).text();
    assert.match(signedIn, /Signed in as <strong>Grace Hopper<\/strong>/);
    assert.equal(
      signedIn.replace(/<span class="viewer"[\s\S]*?<\/span><\/nav>/, ''),
      page.replace(/<span class="viewer"[\s\S]*?<\/span><\/nav>/, ''),
    );
  });
});

describe('/docs in a community with its own name', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ config: { communityName: 'Tool <Library>' } });
  });
  after(() => t?.close());

  test('the kept page carries the name, as the page hooks put it on the page a member gets', async () => {
    const member = await t.member('member', 'Lin');
    const session = await createSession(t.deps.db, t.clock, member.id);
    const variants: Record<string, string>[] = [
      { 'accept-encoding': 'gzip' },
      { cookie: `${SESSION_COOKIE}=${session}` },
    ];
    for (const headers of variants) {
      const text = await (await fetch(`${t.baseUrl}/docs`, { headers })).text();
      assert.match(text, /<title>API reference · Tool &lt;Library&gt;<\/title>/);
      assert.match(text, /<a class="brand" href="\/">Tool &lt;Library&gt;<\/a>/);
    }
  });
});
