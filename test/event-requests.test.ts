import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MS, utcDayStart } from '../src/clock.ts';
import { decideEventRequest } from '../src/domain/events/proposals.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { signInThroughOutbox } from './support/browser.ts';
import { loggedEvents, rowCounts } from './support/community.ts';
import { engines } from './support/databases.ts';
import { runCli, runCliJson } from './support/processes.ts';

const REQUEST = '/api/events/request';

for (const engine of engines) {
  describe(`event proposals (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine: engine.name, limits: { anonymousPerMinute: 10_000 } });
    });
    after(() => t?.close());

    async function proposer() {
      const member = await t.member('core');
      return { member, token: await t.token(member, ['events:request']) };
    }
    const proposal = (extra: Record<string, unknown> = {}) => ({
      title: 'Soldering 101',
      start: new Date(t.clock.now() + 3 * MS.day).toISOString(),
      end: new Date(t.clock.now() + 3 * MS.day + 2 * MS.hour).toISOString(),
      location: 'Workshop',
      description: 'Bring <nothing>; we have irons.',
      capacity: 12,
      visibility: 'members',
      ...extra,
    });
    const stored = (id: string) =>
      t.deps.db.selectFrom('event_requests').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

    test('a proposal is filed as pending, never published by itself', async () => {
      const { member, token } = await proposer();
      const response = await t.call('POST', REQUEST, { token, body: proposal() });
      assert.equal(response.status, 202, response.text);
      assert.equal(response.body.ok, true);
      assert.equal(response.body.status, 'pending');
      assert.equal(response.body.via, 'agent');
      const row = await stored(response.body.id);
      assert.equal(row.member_id, member.id);
      assert.equal(row.status, 'pending');
      assert.deepEqual(JSON.parse(row.details), proposal());
      const upcoming = await t.call('GET', '/api/events/upcoming');
      assert.ok(!upcoming.body.events.some((e: { title: string }) => e.title === 'Soldering 101'));
    });

    test('Idempotency-Key replays the first answer and files one proposal', async () => {
      const { member, token } = await proposer();
      const headers = { 'idempotency-key': `proposal-${member.id}` };
      const first = await t.call('POST', REQUEST, { token, body: proposal(), headers });
      const replay = await t.call('POST', REQUEST, { token, body: proposal(), headers });
      assert.equal(replay.status, 202);
      assert.equal(replay.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(replay.body, first.body);
      const rows = await t.deps.db
        .selectFrom('event_requests')
        .select('id')
        .where('member_id', '=', member.id)
        .execute();
      assert.deepEqual(rows, [{ id: first.body.id }]);
    });

    test('start must be in the future and end after it', async () => {
      const { token } = await proposer();
      const past = await t.call('POST', REQUEST, {
        token,
        body: proposal({ start: new Date(t.clock.now() - MS.hour).toISOString() }),
      });
      assert.equal(past.status, 400);
      assert.equal(past.body.error, 'start_in_past');
      const backwards = await t.call('POST', REQUEST, {
        token,
        body: proposal({ end: new Date(t.clock.now()).toISOString() }),
      });
      assert.equal(backwards.status, 400);
      assert.equal(backwards.body.error, 'invalid_time_range');
    });

    test('per-member daily cap: three a UTC day across all the member’s tokens', async () => {
      const member = await t.member('core');
      const tokens = [await t.token(member, ['events:request']), await t.token(member, ['events:request'])];
      t.clock.set(utcDayStart(t.clock.now()) + 12 * MS.hour);
      for (let i = 0; i < 3; i++)
        assert.equal((await t.call('POST', REQUEST, { token: tokens[i % 2], body: proposal() })).status, 202);
      const refused = await t.call('POST', REQUEST, { token: tokens[1], body: proposal() });
      assert.equal(refused.status, 429);
      assert.equal(refused.body.policy, 'event_requests');
      const count = await t.deps.db
        .selectFrom('event_requests')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('member_id', '=', member.id)
        .executeTakeFirstOrThrow();
      assert.equal(Number(count.n), 3);
    });

    test('scope, tier and sandbox', async () => {
      const member = await t.member('member');
      const token = await t.token(member, ['events:rsvp']);
      const refused = await t.call('POST', REQUEST, { token, body: proposal() });
      assert.equal(refused.status, 403);
      const core = await t.member('core');
      const sandbox = await t.token(core, ['events:request'], { sandbox: true });
      const before = await rowCounts(t, ['event_requests']);
      const receipt = await t.call('POST', REQUEST, { token: sandbox, body: proposal() });
      assert.equal(receipt.body.simulated, true);
      assert.deepEqual(await rowCounts(t, ['event_requests']), before);
    });

    test('the operator approves in the console: published in the upcoming list, on its page, logged for the member', async () => {
      const { member, token } = await proposer();
      const filed = await t.call('POST', REQUEST, { token, body: proposal({ title: 'Approved <one>' }) });
      const operator = await t.member('operator');
      const browser = await signInThroughOutbox(t, operator.email);
      const queue = await browser.request('GET', '/operator/event-requests');
      assert.equal(queue.status, 200);
      assert.match(queue.text, new RegExp(`id="${filed.body.id}"`));
      assert.match(queue.text, /Approved &lt;one&gt;/);
      const forged = await browser.request('POST', '/operator/event-requests/decide', {
        id: filed.body.id,
        decision: 'approve',
      });
      assert.equal(forged.status, 403);
      assert.equal((await stored(filed.body.id)).status, 'pending');
      const decided = await browser.request('POST', '/operator/event-requests/decide', {
        id: filed.body.id,
        decision: 'approve',
        csrf: browser.csrf,
      });
      assert.equal(decided.status, 200);
      const row = await stored(filed.body.id);
      assert.equal(row.status, 'approved');
      assert.equal(row.decided_by, operator.id);
      const url = `${t.baseUrl}/events/${filed.body.id}`;
      const upcoming = await t.call('GET', '/api/events/upcoming?limit=100');
      const published = upcoming.body.events.find((e: { platform_url: string }) => e.platform_url === url);
      assert.equal(published.title, 'Approved <one>');
      const lookup = await t.call('GET', `/api/events/get?url=${encodeURIComponent(url)}`);
      assert.equal(lookup.status, 200);
      assert.equal(lookup.body.event.location, 'Workshop');
      const page = await fetch(url);
      assert.equal(page.status, 200);
      assert.match(await page.text(), /Approved &lt;one&gt;/);
      const [logged] = await loggedEvents(t, member.id, 'event_request_approved');
      assert.deepEqual(logged.target, { request_id: filed.body.id, title: 'Approved <one>', event_url: url });
      const audit = await t.deps.db
        .selectFrom('operator_audit')
        .selectAll()
        .where('target', '=', filed.body.id)
        .execute();
      assert.deepEqual(
        audit.map((a) => [a.action, a.outcome]),
        [['event_request.approve', 'done']],
      );
      const again = await browser.request('POST', '/operator/event-requests/decide', {
        id: filed.body.id,
        decision: 'decline',
        csrf: browser.csrf,
      });
      assert.equal(again.status, 409);
    });

    test('a member cannot reach the review page; a decline carries the reason to the member', async () => {
      const { member, token } = await proposer();
      const filed = await t.call('POST', REQUEST, { token, body: proposal() });
      const core = await signInThroughOutbox(t, member.email);
      assert.equal((await core.request('GET', '/operator/event-requests')).status, 403);
      assert.equal(
        await decideEventRequest(t.deps, filed.body.id, 'decline', 'ops', 'Room is taken'),
        'done',
      );
      const [logged] = await loggedEvents(t, member.id, 'event_request_declined');
      assert.deepEqual(logged.payload, { reason: 'Room is taken' });
      assert.equal((await stored(filed.body.id)).status, 'declined');
    });
  });
}

describe('event proposals from the CLI', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t?.close());

  test('list, approve and decline', async () => {
    t.clock.set(Date.now());
    const olga = await t.member('operator', 'Olga');
    const member = await t.member('core');
    const token = await t.token(member, ['events:request']);
    const start = new Date(Date.now() + 5 * MS.day).toISOString();
    const ids: string[] = [];
    for (const title of ['CLI one', 'CLI two']) {
      ids.push((await t.call('POST', REQUEST, { token, body: { title, start } })).body.id);
    }
    const listed = await runCliJson(t.database.url, ['event-requests', 'list']);
    assert.deepEqual(listed.map((r: { id: string }) => r.id).sort(), [...ids].sort());
    const approved = await runCli(t.database.url, ['event-requests', 'approve', ids[0], '--by', olga.id]);
    assert.equal(approved.code, 0, approved.stderr);
    const declined = await runCli(t.database.url, [
      'event-requests',
      'decline',
      ids[1],
      '--reason',
      'duplicate',
      '--by',
      olga.id,
    ]);
    assert.equal(declined.code, 0, declined.stderr);
    const rows = await t.deps.db
      .selectFrom('event_requests')
      .select(['id', 'status', 'reason'])
      .orderBy('title')
      .execute();
    assert.deepEqual(rows, [
      { id: ids[0], status: 'approved', reason: null },
      { id: ids[1], status: 'declined', reason: 'duplicate' },
    ]);
    const audit = await t.deps.db
      .selectFrom('operator_audit')
      .select(['operator_id', 'action', 'target', 'outcome'])
      .where('target', 'in', ids)
      .orderBy('action')
      .execute();
    assert.deepEqual(audit, [
      { operator_id: olga.id, action: 'event_request.approve', target: ids[0], outcome: 'done' },
      { operator_id: olga.id, action: 'event_request.decline', target: ids[1], outcome: 'done' },
    ]);
    const twice = await runCli(t.database.url, ['event-requests', 'approve', ids[0], '--by', olga.id]);
    assert.equal(twice.code, 1);
    assert.match(twice.stderr, /not_pending/);
  });
});
