import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { MS } from '../src/clock.ts';
import { refreshEvents } from '../src/domain/events/feed.ts';
import { parseIcs } from '../src/domain/events/ics.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { engines } from './helpers/databases.ts';

const HOSTS = ['lu.ma', 'luma.com'];

/** A feed in the shape event platforms export, with the awkward parts RFC 5545 allows. */
function feed(now: number, extra = ''): string {
  const stamp = (ms: number) =>
    new Date(ms)
      .toISOString()
      .replace(/[-:]/g, '')
      .replace(/\.\d{3}/, '');
  const day = (ms: number) => stamp(ms).slice(0, 8);
  return [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//platform//feed//EN',
    'BEGIN:VEVENT',
    'UID:evt-1@platform',
    `DTSTART:${stamp(now + 2 * MS.day)}`,
    `DTEND:${stamp(now + 2 * MS.day + 3 * MS.hour)}`,
    'SUMMARY:Hack night\\, with pizza',
    'LOCATION:Main hall\\; ground floor',
    'DESCRIPTION:Bring a project.\\nAll welcome. Details at https://luma.com/hack-nigh',
    ' t-42',
    'URL:https://luma.com/hack-night-42?utm_source=feed',
    'IMAGE;VALUE=URI:https://images.example.org/hack.png',
    'BEGIN:VALARM',
    'SUMMARY:not the title',
    'TRIGGER:-PT15M',
    'END:VALARM',
    'END:VEVENT',
    'BEGIN:VEVENT',
    'UID:evt-2@platform',
    'DTSTART;TZID=Europe/Berlin:20261215T190000',
    'DTEND;TZID=Europe/Berlin:20261215T210000',
    'SUMMARY:Winter talk',
    'DESCRIPTION:Link in text only: https://lu.ma/winter-talk',
    'END:VEVENT',
    'BEGIN:VEVENT',
    'UID:evt-3@platform',
    `DTSTART;VALUE=DATE:${day(now + 5 * MS.day)}`,
    'SUMMARY:All-day fair',
    'URL:https://lu.ma/fair',
    'END:VEVENT',
    'BEGIN:VEVENT',
    'UID:evt-4@platform',
    `DTSTART:${stamp(now + MS.day)}`,
    'SUMMARY:Elsewhere',
    'URL:https://other.example.org/e',
    'END:VEVENT',
    'BEGIN:VEVENT',
    'UID:evt-5@platform',
    `DTSTART:${stamp(now + MS.day)}`,
    'SUMMARY:Called off',
    'STATUS:CANCELLED',
    'URL:https://lu.ma/called-off',
    'END:VEVENT',
    extra,
    'END:VCALENDAR',
    '',
  ]
    .filter((line) => line !== '')
    .join('\r\n');
}

describe('iCalendar reading', () => {
  const now = Date.UTC(2026, 10, 1, 12);
  const events = parseIcs(feed(now));

  test('unfolds lines, unescapes text, ignores alarm properties, reads images', () => {
    const first = events.find((e) => e.uid === 'evt-1@platform')!;
    assert.equal(first.title, 'Hack night, with pizza');
    assert.equal(first.location, 'Main hall; ground floor');
    assert.equal(
      first.description,
      'Bring a project.\nAll welcome. Details at https://luma.com/hack-night-42',
    );
    assert.equal(first.coverUrl, 'https://images.example.org/hack.png');
    assert.equal(first.start, now + 2 * MS.day);
    assert.equal(first.end, now + 2 * MS.day + 3 * MS.hour);
  });

  test('a time in a named zone becomes the right instant, on both sides of a clock change', () => {
    const winter = events.find((e) => e.uid === 'evt-2@platform')!;
    assert.equal(new Date(winter.start).toISOString(), '2026-12-15T18:00:00.000Z');
    const [summer] = parseIcs(
      'BEGIN:VEVENT\r\nUID:s\r\nDTSTART;TZID=Europe/Berlin:20260715T190000\r\nEND:VEVENT\r\n',
    );
    assert.equal(new Date(summer.start).toISOString(), '2026-07-15T17:00:00.000Z');
  });

  test('an all-day date starts at midnight UTC; cancelled events are flagged; junk is skipped', () => {
    const fair = events.find((e) => e.uid === 'evt-3@platform')!;
    assert.equal(fair.start % MS.day, 0);
    assert.equal(events.find((e) => e.uid === 'evt-5@platform')!.cancelled, true);
    assert.deepEqual(parseIcs('BEGIN:VEVENT\r\nSUMMARY:no uid or start\r\nEND:VEVENT'), []);
    assert.deepEqual(parseIcs('not a calendar at all'), []);
  });
});

for (const engine of engines) {
  describe(`events cache and lookup (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    let platform: Server;
    let platformUrl: string;
    let served = '';
    let status = 200;
    before(async () => {
      platform = createServer((_request, response) => {
        response.writeHead(status, { 'content-type': 'text/calendar' }).end(served);
      });
      await new Promise<void>((resolve) => platform.listen(0, '127.0.0.1', resolve));
      const address = platform.address();
      platformUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/calendar.ics`;
      t = await startTestApp({
        engine: engine.name,
        config: { eventsFeed: platformUrl, eventUrlHosts: HOSTS },
        limits: { anonymousPerMinute: 10_000 },
      });
    });
    after(async () => {
      await t?.close();
      platform?.close();
    });

    test('before any refresh the cache is empty, its age unknown and stale', async () => {
      const response = await t.call('GET', '/api/events/upcoming');
      assert.equal(response.status, 200);
      assert.deepEqual(response.body, { ok: true, events: [], count: 0, age_min: null, stale: true });
    });

    test('a refresh from the platform feed fills the cache with canonical URLs', async () => {
      served = feed(t.clock.now());
      const report = await refreshEvents(t.deps);
      assert.deepEqual(report, { source: new URL(platformUrl).host, stored: 3, removed: 0, skipped: 1 });
      const stored = await t.deps.db
        .selectFrom('events')
        .select(['platform_url', 'source'])
        .orderBy('platform_url')
        .execute();
      assert.deepEqual(stored, [
        { platform_url: 'https://lu.ma/fair', source: 'feed' },
        { platform_url: 'https://lu.ma/hack-night-42', source: 'feed' },
        { platform_url: 'https://lu.ma/winter-talk', source: 'feed' },
      ]);
      const response = await t.call('GET', '/api/events/upcoming?limit=2');
      assert.equal(response.status, 200);
      assert.equal(response.body.count, 2);
      assert.equal(response.body.age_min, 0);
      assert.equal(response.body.stale, false);
      assert.deepEqual(response.body.events[0], {
        platform_url: 'https://lu.ma/hack-night-42',
        title: 'Hack night, with pizza',
        start: new Date(t.clock.now() + 2 * MS.day).toISOString(),
        end: new Date(t.clock.now() + 2 * MS.day + 3 * MS.hour).toISOString(),
        location: 'Main hall; ground floor',
        cover_url: 'https://images.example.org/hack.png',
        description: 'Bring a project.\nAll welcome. Details at https://luma.com/hack-night-42',
      });
      assert.equal(response.body.events[1].platform_url, 'https://lu.ma/fair');
    });

    test('the cache ages and turns stale after 90 minutes; a failing feed keeps the old cache', async () => {
      t.clock.advance(91 * MS.minute);
      status = 503;
      await assert.rejects(refreshEvents(t.deps), /HTTP 503/);
      const response = await t.call('GET', '/api/events/upcoming');
      assert.equal(response.body.age_min, 91);
      assert.equal(response.body.stale, true);
      assert.equal(response.body.count, 3);
      status = 200;
      await refreshEvents(t.deps);
      const fresh = await t.call('GET', '/api/events/upcoming');
      assert.equal(fresh.body.stale, false);
      assert.equal(fresh.body.age_min, 0);
    });

    test('an event the feed drops leaves the cache; local events stay', async () => {
      await t.deps.db
        .insertInto('events')
        .values({
          id: 'evt_local',
          platform_url: 'https://lu.ma/local-one',
          title: 'Local',
          start_at: t.clock.now() + MS.day,
          end_at: null,
          location: null,
          cover_url: null,
          description: null,
          updated_at: t.clock.now(),
          source: 'local',
        })
        .execute();
      served = feed(t.clock.now()).replace(/BEGIN:VEVENT\r\nUID:evt-3@platform[\s\S]*?END:VEVENT\r\n/, '');
      const report = await refreshEvents(t.deps);
      assert.equal(report.removed, 1);
      const urls = (await t.deps.db.selectFrom('events').select('platform_url').execute()).map(
        (r) => r.platform_url,
      );
      assert.ok(!urls.includes('https://lu.ma/fair'));
      assert.ok(urls.includes('https://lu.ma/local-one'));
    });

    test('GET /api/events/get resolves either host form, by url or its alias luma', async () => {
      for (const query of [
        'url=https://lu.ma/hack-night-42',
        'url=https%3A%2F%2Fluma.com%2Fhack-night-42%2F',
        'luma=https://luma.com/hack-night-42?ref=x',
      ]) {
        const response = await t.call('GET', `/api/events/get?${query}`);
        assert.equal(response.status, 200, query);
        assert.equal(response.body.ok, true);
        assert.equal(response.body.event.platform_url, 'https://lu.ma/hack-night-42');
        assert.equal(response.body.event.title, 'Hack night, with pizza');
      }
    });

    test('GET /api/events/get: 400 without a url or off the platform, 404 when not cached', async () => {
      const missing = await t.call('GET', '/api/events/get');
      assert.equal(missing.status, 400);
      assert.equal(missing.body.error, 'missing_url');
      assert.equal(missing.body.error_kind, 'validation');
      for (const url of [
        'https://other.example.org/hack-night-42',
        'not a url',
        'https://lu.ma/',
        'ftp://lu.ma/x',
      ]) {
        const response = await t.call('GET', `/api/events/get?url=${encodeURIComponent(url)}`);
        assert.equal(response.status, 400, url);
        assert.equal(response.body.error, 'non_canonical_url');
        assert.deepEqual(response.body.accepted_hosts, HOSTS);
      }
      const unknown = await t.call('GET', '/api/events/get?url=https://lu.ma/never-heard-of-it');
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.error, 'event_not_found');
      assert.equal(unknown.body.error_kind, 'not_found');
    });

    test('a local .ics path works as the feed too', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'feed-'));
      const file = join(dir, 'events.ics');
      writeFileSync(file, feed(t.clock.now()));
      const deps = { ...t.deps, config: { ...t.deps.config, eventsFeed: file } };
      const report = await refreshEvents(deps);
      assert.equal(report.source, 'file');
      assert.equal(report.stored, 3);
    });

    test('ended events drop out of the upcoming list', async () => {
      t.clock.advance(3 * MS.day);
      const response = await t.call('GET', '/api/events/upcoming?limit=100');
      const urls = response.body.events.map((e: { platform_url: string }) => e.platform_url);
      assert.ok(!urls.includes('https://lu.ma/hack-night-42'));
      assert.ok(urls.includes('https://lu.ma/fair'));
      for (const event of response.body.events)
        assert.ok(Date.parse(event.end ?? event.start) >= t.clock.now());
    });
  });
}
