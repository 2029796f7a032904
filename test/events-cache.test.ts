import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { MS } from '../src/clock.ts';
import { refreshEvents, refreshEventsFromFeed } from '../src/domain/events/feed.ts';
import { MAX_OCCURRENCES, occurrenceWindow, parseIcs } from '../src/domain/events/ics.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';

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

const calendar = (...lines: string[]) =>
  ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//test//EN', ...lines, 'END:VCALENDAR', ''].join('\r\n');

/** Weekly at 18:00 UTC from 5 Nov 2026, six times; the 19th left out, the 26th moved, 3 Dec off. */
const WEEKLY = calendar(
  'BEGIN:VEVENT',
  'UID:weekly@platform',
  'DTSTART:20261105T180000Z',
  'DTEND:20261105T200000Z',
  'RRULE:FREQ=WEEKLY;COUNT=6',
  'EXDATE:20261119T180000Z',
  'SUMMARY:Weekly hack night',
  'URL:https://lu.ma/weekly',
  'END:VEVENT',
  'BEGIN:VEVENT',
  'UID:weekly@platform',
  'RECURRENCE-ID:20261126T180000Z',
  'DTSTART:20261126T190000Z',
  'DTEND:20261126T220000Z',
  'SUMMARY:Weekly hack night (late start)',
  'END:VEVENT',
  'BEGIN:VEVENT',
  'UID:weekly@platform',
  'RECURRENCE-ID:20261203T180000Z',
  'DTSTART:20261203T180000Z',
  'DTEND:20261203T200000Z',
  'STATUS:CANCELLED',
  'END:VEVENT',
);

describe('iCalendar recurrence and time zones', () => {
  const now = Date.UTC(2026, 10, 1, 12);
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

  test('a weekly RRULE with an EXDATE and RECURRENCE-ID overrides expands into its occurrences', () => {
    const events = parseIcs(WEEKLY, occurrenceWindow(now));
    assert.deepEqual(
      events.map((e) => [e.uid, iso(e.start), iso(e.end), e.title, e.url, e.cancelled]),
      [
        [
          'weekly@platform#2026-11-05T18:00:00.000Z',
          '2026-11-05T18:00:00.000Z',
          '2026-11-05T20:00:00.000Z',
          'Weekly hack night',
          'https://lu.ma/weekly',
          false,
        ],
        [
          'weekly@platform#2026-11-12T18:00:00.000Z',
          '2026-11-12T18:00:00.000Z',
          '2026-11-12T20:00:00.000Z',
          'Weekly hack night',
          'https://lu.ma/weekly',
          false,
        ],
        [
          'weekly@platform#2026-11-26T18:00:00.000Z',
          '2026-11-26T19:00:00.000Z',
          '2026-11-26T22:00:00.000Z',
          'Weekly hack night (late start)',
          'https://lu.ma/weekly',
          false,
        ],
        [
          'weekly@platform#2026-12-03T18:00:00.000Z',
          '2026-12-03T18:00:00.000Z',
          '2026-12-03T20:00:00.000Z',
          'Weekly hack night',
          'https://lu.ma/weekly',
          true,
        ],
        [
          'weekly@platform#2026-12-10T18:00:00.000Z',
          '2026-12-10T18:00:00.000Z',
          '2026-12-10T20:00:00.000Z',
          'Weekly hack night',
          'https://lu.ma/weekly',
          false,
        ],
      ],
    );
  });

  test('occurrences stay inside the window and under the cap; RDATE adds one', () => {
    const daily = calendar(
      'BEGIN:VEVENT',
      'UID:daily',
      'DTSTART:20200101T090000Z',
      'RRULE:FREQ=DAILY',
      'RDATE:20261102T150000Z',
      'SUMMARY:Stand-up',
      'END:VEVENT',
    );
    const window = occurrenceWindow(now);
    const events = parseIcs(daily, window);
    assert.equal(events.length, 181 + 1);
    assert.equal(new Set(events.map((e) => e.uid)).size, events.length, 'uids are distinct');
    for (const event of events) assert.ok(event.start >= window.from && event.start <= window.to);
    assert.ok(events.some((e) => iso(e.start) === '2026-11-02T15:00:00.000Z'));
    const wide = parseIcs(daily, { from: now, to: now + 1000 * MS.day });
    assert.equal(wide.length, MAX_OCCURRENCES);
    // The walk from DTSTART is bounded too: a window 30 years on is past the steps allowed.
    assert.deepEqual(parseIcs(daily, { from: now + 11_000 * MS.day, to: now + 11_001 * MS.day }), []);
  });

  test('a TZID defined by a VTIMEZONE converts with that definition, across a clock change', () => {
    const zoned = calendar(
      'BEGIN:VTIMEZONE',
      'TZID:America/New_York',
      'BEGIN:DAYLIGHT',
      'TZOFFSETFROM:-0500',
      'TZOFFSETTO:-0400',
      'TZNAME:EDT',
      'DTSTART:19700308T020000',
      'RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=2SU',
      'END:DAYLIGHT',
      'BEGIN:STANDARD',
      'TZOFFSETFROM:-0400',
      'TZOFFSETTO:-0500',
      'TZNAME:EST',
      'DTSTART:19701101T020000',
      'RRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=1SU',
      'END:STANDARD',
      'END:VTIMEZONE',
      'BEGIN:VTIMEZONE',
      'TZID:Space Station Time',
      'BEGIN:STANDARD',
      'TZOFFSETFROM:+0530',
      'TZOFFSETTO:+0530',
      'DTSTART:19700101T000000',
      'END:STANDARD',
      'END:VTIMEZONE',
      'BEGIN:VEVENT',
      'UID:ny',
      'DTSTART;TZID=America/New_York:20261029T190000',
      'DTEND;TZID=America/New_York:20261029T210000',
      'RRULE:FREQ=WEEKLY;COUNT=2',
      'SUMMARY:Meetup',
      'END:VEVENT',
      'BEGIN:VEVENT',
      'UID:custom',
      'DTSTART;TZID=Space Station Time:20261110T190000',
      'SUMMARY:Custom zone',
      'END:VEVENT',
    );
    const events = parseIcs(zoned, occurrenceWindow(Date.UTC(2026, 9, 28)));
    const starts = Object.fromEntries(events.map((e) => [e.uid, iso(e.start)]));
    // EDT (-4) before 1 November 2026, EST (-5) after.
    assert.equal(starts['ny#2026-10-29T23:00:00.000Z'], '2026-10-29T23:00:00.000Z');
    assert.equal(starts['ny#2026-11-06T00:00:00.000Z'], '2026-11-06T00:00:00.000Z');
    assert.equal(
      iso(events.find((e) => e.uid === 'ny#2026-10-29T23:00:00.000Z')!.end),
      '2026-10-30T01:00:00.000Z',
    );
    assert.equal(starts.custom, '2026-11-10T13:30:00.000Z');
  });

  test('a weekly series in an IANA zone without a VTIMEZONE keeps its wall time across a clock change', () => {
    const events = parseIcs(
      calendar(
        'BEGIN:VEVENT',
        'UID:berlin',
        'DTSTART;TZID=Europe/Berlin:20261022T190000',
        'RRULE:FREQ=WEEKLY;COUNT=2',
        'END:VEVENT',
      ),
      occurrenceWindow(Date.UTC(2026, 9, 21)),
    );
    assert.deepEqual(
      events.map((e) => iso(e.start)),
      ['2026-10-22T17:00:00.000Z', '2026-10-29T18:00:00.000Z'],
    );
  });

  test('malformed input gives no events and does not throw; one bad line costs only its event', () => {
    for (const junk of [
      '',
      'BEGIN:VCALENDAR',
      'BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:a\r\nDTSTART:20261105T180000Z\r\nEND:VCALENDAR',
      calendar('BEGIN:VEVENT', 'UID:a', 'DTSTART:2026-11-05', 'END:VEVENT'),
      calendar('BEGIN:VEVENT', 'UID:a', 'DTSTART:20261105T180000Z', 'RRULE:FREQ=SOMETIMES', 'END:VEVENT'),
      calendar('BEGIN:VEVENT', 'UID:a', 'DTSTART;TZID="unterminated:20261105T180000', 'END:VEVENT'),
      '\u0000\u0001 binary \uFFFD',
    ]) {
      assert.deepEqual(parseIcs(junk, occurrenceWindow(now)), [], JSON.stringify(junk));
    }
    const partly = calendar(
      'BEGIN:VEVENT',
      'UID:broken',
      'DTSTART:20261105T180000Z',
      'a line with no colon',
      'END:VEVENT',
      'BEGIN:VEVENT',
      'UID:fine',
      'DTSTART:20261106T180000Z',
      'SUMMARY:Still here',
      'END:VEVENT',
    );
    assert.deepEqual(
      parseIcs(partly, occurrenceWindow(now)).map((e) => [e.uid, e.title]),
      [['fine', 'Still here']],
    );
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
      assert.deepEqual(report, {
        source: new URL(platformUrl).host,
        stored: 3,
        removed: 0,
        skipped: 1,
        served: 3,
      });
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

    test('a recurring event is cached once, at its next occurrence', async () => {
      const first = Math.floor((t.clock.now() - 6 * MS.day) / 1000) * 1000;
      const start = new Date(first).toISOString().replace(/[-:]|\.\d{3}/g, '');
      const text = calendar(
        'BEGIN:VEVENT',
        'UID:series',
        `DTSTART:${start}`,
        'RRULE:FREQ=WEEKLY;COUNT=4',
        'SUMMARY:Series',
        'URL:https://lu.ma/series',
        'END:VEVENT',
      );
      const report = await refreshEventsFromFeed(t.deps, text, 'test');
      assert.equal(report.stored, 1);
      const [row] = await t.deps.db
        .selectFrom('events')
        .select(['start_at', 'title'])
        .where('platform_url', '=', 'https://lu.ma/series')
        .execute();
      assert.equal(row.start_at, first + 7 * MS.day);
    });
  });
}
