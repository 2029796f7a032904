// A sandbox token's write is refused exactly where the live call would be, and otherwise answered
// with the receipt, leaving nothing behind; the activity log marks sandbox calls.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from './support/app.ts';
import { cacheEvent, rowCounts } from './support/community.ts';
import { engines } from './support/databases.ts';

const KEPT = ['rsvps', 'bookings', 'event_requests', 'event_log'] as const;

for (const engine of engines) {
  describe(`sandbox answers what live would (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    let live: string;
    let sandbox: string;
    let memberId: string;
    before(async () => {
      t = await startTestApp({ engine: engine.name });
      const member = await t.member('core');
      memberId = member.id;
      const scopes = ['events:rsvp', 'events:request', 'resources:book', 'membership:read'];
      live = await t.token(member, scopes);
      sandbox = await t.token(member, scopes, { sandbox: true });
    });
    after(async () => {
      await t?.close();
    });

    const inDays = (days: number) => new Date(t.clock.now() + days * 86_400_000).toISOString();

    /** What a call may leave behind: rows of the write tables, and quota counters (not the per-minute limits). */
    async function kept() {
      const quotas = await t.deps.db
        .selectFrom('counters')
        .select('key')
        .where('key', 'not like', 'anonymous:%')
        .where('key', 'not like', 'token:%')
        .execute();
      return { ...(await rowCounts(t, [...KEPT])), quotas: quotas.map((row) => row.key).sort() };
    }

    /** The same call with the live and the sandbox token: the same refusal, and nothing stored by either. */
    async function refusedAlike(path: string, body: object, status: number, error: string) {
      const before = await kept();
      const asSandbox = await t.call('POST', path, { token: sandbox, body });
      const asLive = await t.call('POST', path, { token: live, body });
      assert.equal(asSandbox.status, status, JSON.stringify(asSandbox.body));
      assert.equal(asSandbox.body.error, error);
      assert.equal(asLive.status, status);
      assert.equal(asLive.body.error, error);
      assert.deepEqual(await kept(), before);
    }

    test('an RSVP to an event that is not in the cache: 404 for both', async () => {
      await refusedAlike(
        '/api/events/rsvp',
        { event_url: 'https://lu.ma/not-an-event-we-know' },
        404,
        'event_not_found',
      );
    });

    test('a booking of an unknown resource: 404 for both', async () => {
      await refusedAlike(
        '/api/resources/book',
        {
          resource_id: 'no-such-room',
          start_iso: inDays(2),
          end_iso: inDays(2.05),
          email: 'agent@example.org',
        },
        404,
        'unknown_resource',
      );
    });

    test('an event proposal starting in 2020: 400 for both', async () => {
      await refusedAlike(
        '/api/events/request',
        { title: 'Retro night', start: '2020-05-08T18:00:00Z' },
        400,
        'start_in_past',
      );
    });

    test('an acceptable call: the receipt, nothing stored, and the activity row says sandbox', async () => {
      const url = await cacheEvent(t, 'sandbox-parity');
      // Activity ids sort by time: this call's row is the newest.
      t.clock.advance(1000);
      const before = await kept();
      const rsvpRows = async () =>
        (
          await t.deps.db
            .selectFrom('activity')
            .select('id')
            .where('member_id', '=', memberId)
            .where('operation', '=', 'rsvpToEvent')
            .execute()
        ).length;
      const rowsBefore = await rsvpRows();
      const response = await t.call('POST', '/api/events/rsvp', { token: sandbox, body: { event_url: url } });
      assert.equal(response.status, 200);
      assert.equal(response.body.simulated, true);
      assert.deepEqual(response.body.would_have, {
        action: 'rsvpToEvent',
        scope: 'events:rsvp',
        args: { event_url: url },
      });
      assert.deepEqual(await kept(), before);
      assert.equal(
        await rsvpRows(),
        rowsBefore + 1,
        'one activity row, kept though the rehearsal rolled back',
      );
      const [row] = await t.deps.db
        .selectFrom('activity')
        .select(['operation', 'status', 'outcome'])
        .where('member_id', '=', memberId)
        .where('operation', '=', 'rsvpToEvent')
        .orderBy('id', 'desc')
        .limit(1)
        .execute();
      assert.deepEqual(
        { ...row, status: Number(row.status) },
        {
          operation: 'rsvpToEvent',
          status: 200,
          outcome: 'sandbox',
        },
      );
      const listed = await t.call('GET', '/api/activity/me?limit=1', { token: live });
      assert.equal(listed.body.events[0].outcome, 'sandbox');
    });
  });
}
