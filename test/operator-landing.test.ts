// The operator console you can find: /operator with the queues and
// their counts, linked from the home page; queues oldest first with the story as the community sees
// it; approved stories on the public /highlights page; the dashboard's charts drawn from the
// activity log. Real port, real session cookies, both engines.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MS } from '../src/clock.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { type BusyCommunity, browserOf, busyCommunity } from './support/busy-community.ts';
import { engines } from './support/databases.ts';

const count = (page: string, queue: string) =>
  Number(page.match(new RegExp(`id="count-${queue}">(\\d+)<`))?.[1]);

for (const engine of engines) {
  describe(`the operator console's landing page and queues (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    let community: BusyCommunity;
    before(async () => {
      t = await startTestApp({ engine: engine.name, limits: { anonymousPerMinute: 10_000 } });
      community = await busyCommunity(t);
    });
    after(() => t?.close());

    const stored = async (
      table: 'tier_requests' | 'highlights' | 'event_requests' | 'feedback',
      status: string,
    ) =>
      Number(
        (
          await t.deps.db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('status', '=', status)
            .executeTakeFirstOrThrow()
        ).n,
      );

    test('/operator and /operator/ show every queue with the stored counts; signed out goes to sign in, a member is refused', async () => {
      const operator = await browserOf(t, community.operator);
      for (const path of ['/operator', '/operator/']) {
        const page = await operator.request('GET', path);
        assert.equal(page.status, 200, `${path}: ${page.text.slice(0, 200)}`);
        assert.match(page.text, /<h1>Operator console<\/h1>/);
        assert.equal(count(page.text, 'tier_requests'), await stored('tier_requests', 'pending'));
        assert.equal(count(page.text, 'highlights'), await stored('highlights', 'pending'));
        assert.equal(count(page.text, 'event_requests'), await stored('event_requests', 'pending'));
        assert.equal(count(page.text, 'feedback'), await stored('feedback', 'open'));
        assert.equal(count(page.text, 'highlights'), 2);
        assert.equal(count(page.text, 'tier_requests'), 1);
        for (const queue of ['tier-requests', 'highlights', 'event-requests', 'feedback'])
          assert.match(page.text, new RegExp(`href="/operator/${queue}"`), `links the ${queue} queue`);
      }
      const anonymous = await fetch(`${t.baseUrl}/operator`, { redirect: 'manual' });
      assert.equal(anonymous.status, 303);
      assert.equal(anonymous.headers.get('location'), '/signin?next=/operator');
      const member = await browserOf(t, community.core);
      const refused = await member.request('GET', '/operator');
      assert.equal(refused.status, 403);
      assert.match(refused.text, /Operators only/);
    });

    test('the home page shows a signed-in operator as signed in, with the way to the queues and their counts', async () => {
      const home = await (await browserOf(t, community.operator)).request('GET', '/');
      assert.equal(home.status, 200);
      assert.match(home.text, /Signed in as <strong>Olive Operator<\/strong> \(operator\)/);
      assert.doesNotMatch(home.text, /<a class="button primary" href="\/signin">Sign in<\/a>/);
      assert.match(home.text, /<a href="\/operator">Operator console<\/a>/);
      assert.equal(count(home.text, 'highlights'), 2);
      const memberHome = await (await browserOf(t, community.core)).request('GET', '/');
      assert.match(memberHome.text, /Signed in as <strong>Cleo Core<\/strong> \(core\)/);
      assert.doesNotMatch(memberHome.text, /href="\/operator"/, 'no console link for a member');
      const anonymous = await fetch(`${t.baseUrl}/`);
      assert.match(await anonymous.text(), /href="\/signin">Sign in</);
    });

    test('the highlight queue: oldest first, each story as the community will see it (not raw JSON), with a count', async () => {
      const queue = await (await browserOf(t, community.operator)).request('GET', '/operator/highlights');
      assert.equal(queue.status, 200);
      const order = [...queue.text.matchAll(/<section class="card" id="([^"]+)"/g)].map((m) => m[1]);
      assert.deepEqual(order, community.storyIds, 'oldest first');
      assert.match(queue.text, /<strong>2<\/strong> stories waiting/);
      assert.match(queue.text, /<h2>Ada Example spoke at Community meetup<\/h2>/);
      assert.match(queue.text, /Ada Example gave a &lt;talk&gt; about tidy databases\./);
      assert.match(queue.text, /<li><strong>40<\/strong> attendees<\/li>/);
      assert.doesNotMatch(queue.text, /&quot;member_name&quot;/, 'no escaped JSON');
    });

    test('approving a story from its queue puts it on the public highlights page, through the registry operation', async () => {
      const operator = await browserOf(t, community.operator);
      await operator.request('GET', '/operator/highlights');
      const [first] = community.storyIds;
      const decided = await operator.request('POST', '/operator/highlights/decide', {
        id: first,
        decision: 'approve',
        csrf: operator.csrf,
      });
      assert.equal(decided.status, 200, decided.text);
      const row = await t.deps.db
        .selectFrom('highlights')
        .selectAll()
        .where('id', '=', first)
        .executeTakeFirstOrThrow();
      assert.equal(row.status, 'active');
      const published = await fetch(`${t.baseUrl}/highlights`);
      const text = await published.text();
      assert.equal(published.status, 200);
      assert.match(text, new RegExp(`id="story-${first}"`));
      assert.match(text, /Ada Example spoke at Community meetup/);
      assert.doesNotMatch(text, new RegExp(community.storyIds[1]), 'a pending story is not public');
      // The page lists what the public operation lists.
      const listed = await t.call('GET', '/api/highlights');
      assert.deepEqual(
        listed.body.highlights.map((h: { id: string }) => h.id),
        [...text.matchAll(/id="story-([^"]+)"/g)].map((m) => m[1]),
      );
      const landing = await operator.request('GET', '/operator');
      assert.equal(count(landing.text, 'highlights'), 1, 'the count follows the decision');
    });

    test('the dashboard draws calls and refusals per day by surface from the activity log', async () => {
      const page = (await (await browserOf(t, community.operator)).request('GET', '/operator')).text;
      for (const id of [
        'chart-requests',
        'chart-refusals',
        'chart-tokens',
        'chart-backlogs',
        'chart-operations',
        'chart-slowest',
      ])
        assert.match(page, new RegExp(`<figure class="chart" id="${id}">[\\s\\S]*?<svg [^>]*role="img"`), id);
      const rows = await t.deps.db.selectFrom('activity').select(['at', 'surface', 'status']).execute();
      const byDay = new Map<string, { rest: number; a2a: number; refused: number }>();
      for (const row of rows) {
        const day = new Date(Math.floor(Number(row.at) / MS.day) * MS.day).toISOString().slice(5, 10);
        const entry = byDay.get(day) ?? { rest: 0, a2a: 0, refused: 0 };
        if (row.surface === 'rest') entry.rest++;
        if (row.surface === 'a2a') entry.a2a++;
        if (Number(row.status) >= 400) entry.refused++;
        byDay.set(day, entry);
      }
      assert.ok(byDay.size >= 3, `three days of calls (${[...byDay.keys()]})`);
      const bothSurfaces = [...byDay.values()].filter((day) => day.a2a > 0 && day.rest > 0);
      assert.ok(bothSurfaces.length >= 3, `REST and A2A on three days (${JSON.stringify([...byDay])})`);
      const requests = page.match(/<figure class="chart" id="chart-requests">[\s\S]*?<\/figure>/)?.[0] ?? '';
      const table = requests.slice(requests.indexOf('<table>'));
      const header = [
        ...(table.match(/<thead>[\s\S]*?<\/thead>/)?.[0] ?? '').matchAll(/<th scope="col">([^<]*)<\/th>/g),
      ].map((m) => m[1]);
      for (const [day, expected] of byDay) {
        const cells = table.match(new RegExp(`<th scope="row">${day}</th>((?:<td>\\d+</td>)+)`))?.[1];
        assert.ok(cells, `a row for ${day}`);
        const values = [...cells.matchAll(/<td>(\d+)<\/td>/g)].map((m) => Number(m[1]));
        assert.equal(values[header.indexOf('rest') - 1] ?? 0, expected.rest, `${day} rest`);
        assert.equal(values[header.indexOf('a2a') - 1] ?? 0, expected.a2a, `${day} a2a`);
        const bars = [...requests.matchAll(new RegExp(`<title>${day}, (rest|a2a): (\\d+)</title>`, 'g'))];
        assert.equal(
          bars.length,
          [expected.rest, expected.a2a].filter(Boolean).length,
          `${day}: one bar segment per surface`,
        );
      }
      const refusals = page.match(/<figure class="chart" id="chart-refusals">[\s\S]*?<\/figure>/)?.[0] ?? '';
      const refusedBars = [...refusals.matchAll(/<title>[^<]*, rest: (\d+)<\/title>/g)].reduce(
        (sum, m) => sum + Number(m[1]),
        0,
      );
      assert.equal(refusedBars, community.made.refused);
      // The slowest operations are this instance's own figures: the community above made its calls
      // through this very process, so the operations it called most are ranked, each with a mean.
      const slowest = page.match(/<figure class="chart" id="chart-slowest">[\s\S]*?<\/figure>/)?.[0] ?? '';
      const ranked = [...slowest.matchAll(/<title>([^<,]+), Mean ms: ([\d.]+)<\/title>/g)];
      assert.ok(ranked.length >= 1, slowest.slice(0, 400));
      const means = ranked.map((m) => Number(m[2]));
      assert.deepEqual(
        means,
        [...means].sort((a, b) => b - a),
        'slowest first',
      );
      assert.match(page, /the slowest operations are this instance's own/);
    });

    test('queues are oldest first, with how many wait: event proposals, feedback, tier requests', async () => {
      const operator = await browserOf(t, community.operator);
      const waitingIds = async (table: 'event_requests' | 'feedback' | 'tier_requests') => {
        const status = table === 'feedback' ? 'open' : 'pending';
        const rows =
          table === 'feedback'
            ? await t.deps.db
                .selectFrom('feedback')
                .select(['ticket_id as id', 'created_at', 'status'])
                .execute()
            : await t.deps.db.selectFrom(table).select(['id', 'created_at', 'status']).execute();
        return rows
          .filter((row) => row.status === status)
          .sort((a, b) => Number(a.created_at) - Number(b.created_at) || (a.id < b.id ? -1 : 1))
          .map((row) => row.id);
      };
      const queues = [
        ['/operator/event-requests', 'event_requests'],
        ['/operator/feedback', 'feedback'],
        ['/operator/tier-requests', 'tier_requests'],
      ] as const;
      for (const [path, table] of queues) {
        const page = await operator.request('GET', path);
        assert.equal(page.status, 200, path);
        const expected = await waitingIds(table);
        assert.ok(expected.length >= 1, path);
        assert.match(
          page.text,
          new RegExp(`<strong>${expected.length}</strong> \\w+ waiting, oldest first`),
          path,
        );
        const shown = [...page.text.matchAll(/<article class="card" id="([^"]+)"/g)].map((m) => m[1]);
        assert.deepEqual(shown, expected, `${path}: oldest first`);
        assert.match(page.text, /aria-current="page"/, `${path} marks itself in the operator navigation`);
        if (table === 'tier_requests')
          assert.match(
            page.text,
            /<strong>Remy Resident<\/strong> \(resident\) asks for <strong>core<\/strong>/,
          );
      }
    });
  });
}
