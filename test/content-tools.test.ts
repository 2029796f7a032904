import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { DOMParser } from '@xmldom/xmldom';
import { readContentFolder } from '../src/domain/content/folder.ts';
import { importContent } from '../src/domain/content/import.ts';
import { atomFeed, type Feed } from '../src/surfaces/newsletter-feeds.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { contentFolder, HOSTILE_ISSUE } from './support/content.ts';
import { engines } from './support/databases.ts';

const PUBLIC_TOOLS = [
  'ic_signal_list_issues',
  'ic_signal_get_latest',
  'ic_signal_get_issue',
  'ic_signal_get_story',
  'ic_signal_search',
  'ic_news_get',
  'ic_presentations_list',
  'ic_presentations_get',
  'ic_donate',
  'ic_donations_total',
];

const ATOM = 'http://www.w3.org/2005/Atom';

function parseXml(text: string) {
  return new DOMParser({
    onError: (level, message) => {
      if (level !== 'warning') throw new Error(`${level}: ${message}`);
    },
  }).parseFromString(text, 'text/xml');
}

for (const engine of engines) {
  describe(`public content tools and newsletter feeds (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    let folder: string;
    const clients: Client[] = [];
    before(async () => {
      t = await startTestApp({ engine: engine.name });
      folder = contentFolder({ 'newsletter/2026-08-fish-night.md': HOSTILE_ISSUE });
    });
    after(async () => {
      await Promise.all(clients.map((c) => c.close()));
      await t?.close();
      rmSync(folder, { recursive: true, force: true });
    });

    async function call(name: string, args: Record<string, unknown> = {}) {
      const client = new Client({ name: 'agent-commons-tests', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${t.baseUrl}/api/mcp`)));
      clients.push(client);
      const result = await client.callTool({ name, arguments: args });
      const body = result.structuredContent as Record<string, any>;
      assert.deepEqual(JSON.parse((result.content as { text: string }[])[0].text), body, name);
      return { isError: result.isError, body };
    }

    test('before anything is published: empty lists, 404 for the latest issue and the donation page', async () => {
      assert.deepEqual((await call('ic_signal_list_issues')).body, { ok: true, count: 0, issues: [] });
      const latest = await call('ic_signal_get_latest');
      assert.equal(latest.isError, true);
      assert.equal(latest.body.error, 'no_issues');
      assert.equal(latest.body.error_kind, 'not_found');
      const donate = await call('ic_donate');
      assert.equal(donate.body.error, 'no_donation_page');
      const feed = await fetch(`${t.baseUrl}/newsletter/feed.json`);
      assert.equal(feed.status, 200);
      assert.deepEqual(((await feed.json()) as { items: unknown[] }).items, []);
      await importContent(t.deps, readContentFolder(folder));
    });

    test('tools/list has every public tool, and each answers without a token', async () => {
      const client = new Client({ name: 'agent-commons-tests', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${t.baseUrl}/api/mcp`)));
      clients.push(client);
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      for (const name of PUBLIC_TOOLS) assert.ok(names.includes(name), name);
      const args: Record<string, Record<string, unknown>> = {
        ic_signal_get_issue: { slug: '2026-06-doors-open' },
        ic_signal_get_story: { slug: '2026-06-doors-open', story_id: 'second-floor' },
        ic_signal_search: { q: 'printer' },
        ic_presentations_get: { number: 2 },
      };
      for (const name of PUBLIC_TOOLS) {
        const { isError, body } = await call(name, args[name] ?? {});
        assert.equal(isError, undefined, `${name}: ${JSON.stringify(body)}`);
        assert.equal(body.ok, true, name);
      }
    });

    test('the newsletter reads answer what the folder says', async () => {
      const list = await call('ic_signal_list_issues', { limit: 2 });
      assert.deepEqual(list.body, {
        ok: true,
        count: 2,
        issues: [
          {
            slug: '2026-08-fish-night',
            title: 'Fish & Chips <night>',
            date: '2026-08-01',
            summary: 'Quotes \' and \\" & ampersands',
            story_count: 1,
          },
          {
            slug: '2026-07-summer-schedule',
            title: 'Summer schedule and a resin printer',
            date: '2026-07-01',
            summary: 'Longer weekend hours, a resin printer on trial, and the first member-run workshop.',
            story_count: 3,
          },
        ],
      });
      const issue = (await call('ic_signal_get_issue', { slug: '2026-07-summer-schedule' })).body.issue;
      assert.deepEqual(
        issue.stories.map((s: { id: string }) => s.id),
        ['summer-hours', 'resin-printer', 'first-member-run-workshop'],
      );
      assert.match(issue.intro, /^July brings longer evenings/);
      assert.match(
        issue.stories[2].body,
        /## not a story/,
        'a heading inside a code block stays in its story',
      );
      assert.equal((await call('ic_signal_get_latest')).body.issue.slug, '2026-08-fish-night');
      const story = await call('ic_signal_get_story', {
        slug: '2026-07-summer-schedule',
        story_id: 'resin-printer',
      });
      assert.deepEqual(Object.keys(story.body.story).sort(), [
        'body',
        'date',
        'id',
        'issue_slug',
        'issue_title',
        'title',
      ]);
      assert.equal(story.body.story.title, 'A resin printer on trial');
      assert.equal(story.body.story.issue_title, 'Summer schedule and a resin printer');
      const missing = await call('ic_signal_get_story', {
        slug: '2026-07-summer-schedule',
        story_id: 'nope',
      });
      assert.equal(missing.body.error, 'story_not_found');
      assert.equal((await call('ic_signal_get_issue', { slug: 'nope' })).body.error, 'issue_not_found');
      assert.equal(
        (await call('ic_signal_get_issue', { slug: 'x', extra: 1 })).body.error_kind,
        'validation',
      );
    });

    test('search is full text, best match first, prefixes, no query syntax', async () => {
      const printers = await call('ic_signal_search', { q: 'printer' });
      assert.equal(printers.body.query, 'printer');
      const ids = printers.body.results.map((r: { story_id: string }) => r.story_id);
      assert.ok(ids.includes('resin-printer') && ids.includes('the-printer-corner-moved'), ids.join());
      assert.equal(printers.body.count, ids.length);
      const hit = printers.body.results.find((r: { story_id: string }) => r.story_id === 'resin-printer');
      assert.equal(hit.slug, '2026-07-summer-schedule');
      assert.equal(hit.date, '2026-07-01');
      assert.match(hit.excerpt, /resin printer/i);
      assert.deepEqual(
        (await call('ic_signal_search', { q: 'solder' })).body.results.map(
          (r: { story_id: string }) => r.story_id,
        ),
        ['first-member-run-workshop'],
      );
      assert.equal((await call('ic_signal_search', { q: 'zzzqqq' })).body.count, 0);
      assert.equal((await call('ic_signal_search', { q: '"*) OR NEAR(' })).body.ok, true);
      assert.equal((await call('ic_signal_search', { q: 'printer', limit: 1 })).body.count, 1);
    });

    test('news, presentations and the donation page', async () => {
      const news = (await call('ic_news_get')).body;
      assert.deepEqual(
        news.items.map((i: { id: string }) => i.id),
        ['open-hardware-summit', 'community-land-trust'],
      );
      assert.equal(news.items[0].url, 'https://summit.example.org/programme');
      const talks = (await call('ic_presentations_list')).body;
      assert.deepEqual(
        talks.presentations.map((p: { number: number }) => p.number),
        [2, 1],
      );
      const talk = (await call('ic_presentations_get', { number: 2 })).body.presentation;
      assert.equal(talk.speaker, 'Cory Core');
      assert.equal(talk.video_url, 'https://video.example.org/watch/agents-ask-first');
      assert.equal((await call('ic_presentations_get', { number: 99 })).body.error, 'presentation_not_found');
      const donate = (await call('ic_donate')).body;
      assert.equal(donate.give_url, 'https://donate.example.org/agent-commons-demo');
      assert.equal(donate.payments_accepted, false);
      assert.deepEqual(
        donate.tiers.map((tier: Record<string, unknown>) => [
          tier.name,
          tier.amount,
          tier.currency,
          tier.per,
        ]),
        [
          ['Friend', 5, 'USD', null],
          ['Supporter', 20, 'USD', 'month'],
          ['Patron', 100, 'USD', 'year'],
        ],
      );
      assert.match(donate.how_to_give, /^The space runs on membership dues/);
    });

    test('A2A tasks/send runs the public tools without a token', async () => {
      const send = (capability: string, args: unknown) =>
        t.call('POST', '/api/a2a', {
          body: { jsonrpc: '2.0', id: 7, method: 'tasks/send', params: { capability, arguments: args } },
        });
      const viaA2a = await send('ic_signal_search', { q: 'printer' });
      assert.deepEqual(viaA2a.body.result, (await call('ic_signal_search', { q: 'printer' })).body);
      const missing = await send('ic_presentations_get', { number: 99 });
      assert.equal(missing.body.error.code, -31404);
      assert.equal(missing.body.error.data.error, 'presentation_not_found');
    });

    test('REST: every public tool is a GET path answering what its MCP tool answers, without a token', async () => {
      // A fresh minute for the anonymous per-IP budget: this test makes about thirty calls.
      t.clock.advance(60_000);
      const rest = (path: string) => t.call('GET', path);
      const same: [string, string, Record<string, unknown>][] = [
        ['/api/signal/issues?limit=2', 'ic_signal_list_issues', { limit: 2 }],
        ['/api/signal/latest', 'ic_signal_get_latest', {}],
        [
          '/api/signal/issue?slug=2026-07-summer-schedule',
          'ic_signal_get_issue',
          { slug: '2026-07-summer-schedule' },
        ],
        [
          '/api/signal/story?slug=2026-07-summer-schedule&story_id=resin-printer',
          'ic_signal_get_story',
          { slug: '2026-07-summer-schedule', story_id: 'resin-printer' },
        ],
        ['/api/signal/search?q=printer&limit=1', 'ic_signal_search', { q: 'printer', limit: 1 }],
        ['/api/news', 'ic_news_get', {}],
        ['/api/presentations', 'ic_presentations_list', {}],
        ['/api/presentations/get?number=2', 'ic_presentations_get', { number: 2 }],
        ['/api/payments/donate/info', 'ic_donate', {}],
        ['/api/payments/donations', 'ic_donations_total', {}],
      ];
      for (const [path, tool, args] of same) {
        const response = await rest(path);
        assert.equal(response.status, 200, `${path}: ${response.text}`);
        assert.deepEqual(response.body, (await call(tool, args)).body, path);
      }
      const missing = await rest('/api/presentations/get?number=99');
      assert.equal(missing.status, 404);
      assert.equal(missing.body.error, 'presentation_not_found');
      const unknown = await rest('/api/signal/issue?slug=nope');
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.error, 'issue_not_found');
      const bad = await rest('/api/signal/issues?limit=0');
      assert.equal(bad.status, 400);
      assert.equal(bad.body.error_kind, 'validation');
      const spec = (await rest('/openapi.json')).body;
      for (const [path] of same) assert.ok(spec.paths[path.split('?')[0]]?.get, `${path} in /openapi.json`);
    });

    test('JSON Feed 1.1: required fields, one item per issue, HTML rendered safely', async () => {
      const response = await fetch(`${t.baseUrl}/newsletter/feed.json`);
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /^application\/feed\+json/);
      const feed = (await response.json()) as Record<string, any>;
      assert.equal(feed.version, 'https://jsonfeed.org/version/1.1');
      assert.equal(typeof feed.title, 'string');
      assert.equal(feed.feed_url, `${t.baseUrl}/newsletter/feed.json`);
      assert.equal(feed.items.length, 3);
      for (const item of feed.items) {
        assert.equal(typeof item.id, 'string');
        assert.equal(typeof item.content_html, 'string');
        assert.ok(!Number.isNaN(Date.parse(item.date_published)));
      }
      const hostile = feed.items[0];
      assert.equal(hostile.id, `${t.baseUrl}/newsletter/2026-08-fish-night`);
      assert.equal(hostile.title, 'Fish & Chips <night>');
      assert.ok(!hostile.content_html.includes('<script>'), hostile.content_html);
      assert.ok(hostile.content_html.includes('&lt;script&gt;'), hostile.content_html);
      assert.ok(!hostile.content_html.includes('href="javascript:'), hostile.content_html);
      assert.ok(hostile.content_html.includes('<h2>Menu &amp; prices</h2>'), hostile.content_html);
      const page = await fetch(hostile.url);
      assert.equal(page.status, 200);
      assert.ok(!(await page.text()).includes('<script>alert'));
    });

    test('Atom 1.0: well-formed XML with ids, updated times and escaped content', async () => {
      const response = await fetch(`${t.baseUrl}/newsletter/feed.xml`);
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /^application\/atom\+xml/);
      const doc = parseXml(await response.text());
      const feed = doc.documentElement!;
      assert.equal(feed.localName, 'feed');
      assert.equal(feed.namespaceURI, ATOM);
      const child = (parent: any, name: string) =>
        Array.from(parent.childNodes as ArrayLike<any>).filter((n) => n.localName === name);
      for (const name of ['id', 'title', 'updated', 'author'])
        assert.equal(child(feed, name).length, 1, name);
      const entries = child(feed, 'entry');
      assert.equal(entries.length, 3);
      const ids = new Set<string>();
      for (const entry of entries) {
        for (const name of ['id', 'title', 'updated', 'content'])
          assert.equal(child(entry, name).length, 1, name);
        ids.add(child(entry, 'id')[0].textContent);
        assert.ok(!Number.isNaN(Date.parse(child(entry, 'updated')[0].textContent)));
      }
      assert.equal(ids.size, 3, 'entry ids are unique');
      const first = entries[0];
      assert.equal(child(first, 'title')[0].textContent, 'Fish & Chips <night>');
      assert.equal(child(first, 'summary')[0].textContent, 'Quotes \' and \\" & ampersands');
      const content = child(first, 'content')[0];
      assert.equal(content.getAttribute('type'), 'html');
      // The text of the element is the escaped HTML: a reader renders it, and the script is text.
      assert.ok(content.textContent.includes('&lt;script&gt;'), content.textContent);
      assert.ok(!content.textContent.includes('<script>'));
      assert.ok(!content.textContent.includes('\u0001'));
    });

    test('feeds carry validators and answer 304 to a matching conditional request', async () => {
      for (const path of ['/newsletter/feed.json', '/newsletter/feed.xml']) {
        const first = await fetch(`${t.baseUrl}${path}`);
        const etag = first.headers.get('etag')!;
        const lastModified = first.headers.get('last-modified')!;
        assert.match(etag, /^"[A-Za-z0-9_-]+"$/);
        assert.ok(!Number.isNaN(Date.parse(lastModified)));
        assert.match(first.headers.get('cache-control') ?? '', /max-age=/);
        const byTag = await fetch(`${t.baseUrl}${path}`, { headers: { 'if-none-match': etag } });
        assert.equal(byTag.status, 304);
        assert.equal(await byTag.text(), '');
        const byDate = await fetch(`${t.baseUrl}${path}`, { headers: { 'if-modified-since': lastModified } });
        assert.equal(byDate.status, 304);
        const stale = await fetch(`${t.baseUrl}${path}`, { headers: { 'if-none-match': '"other"' } });
        assert.equal(stale.status, 200);
        const older = new Date(Date.parse(lastModified) - 1000).toUTCString();
        assert.equal(
          (await fetch(`${t.baseUrl}${path}`, { headers: { 'if-modified-since': older } })).status,
          200,
        );
      }
    });
  });
}

test('Atom: a title with <, & and ]]> and control characters round-trips through an XML parser', async () => {
  const title = 'Cats <&> dogs ]]> <![CDATA[ x ]]> "quoted" \'single\'';
  const url = 'https://x.example.org/newsletter/a?b=1&c=2';
  const text = await atomFeed('https://x.example.org', {
    updated: new Date(Date.UTC(2026, 0, 2)),
    issues: [
      {
        slug: 'a',
        title: `${title}\u0001`,
        date: '2026-01-01',
        summary: ']]>&amp;',
        html: '<p>a ]]> b</p>\u0000',
        url,
        updated_at: '2026-01-02T00:00:00.000Z',
      } as Feed['issues'][number],
    ],
  });
  const doc = parseXml(text);
  const entry = doc.getElementsByTagNameNS(ATOM, 'entry')[0]!;
  const only = (name: string) => entry.getElementsByTagNameNS(ATOM, name)[0]!;
  assert.equal(only('title').textContent, title);
  assert.equal(only('summary').textContent, ']]>&amp;');
  assert.equal(only('content').textContent, '<p>a ]]> b</p>');
  assert.equal(only('id').textContent, url);
  assert.equal(only('link').getAttribute('href'), url);
});
