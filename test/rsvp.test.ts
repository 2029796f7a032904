import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { MS, utcDayStart } from '../src/clock.ts';
import { deliverDueRsvps } from '../src/domain/events/rsvp-delivery.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { cacheEvent, loggedEvents, rowCounts, tokenIdOf } from './support/community.ts';
import { engines } from './support/databases.ts';

const RSVP = '/api/events/rsvp';

/** A stand-in for the event platform's RSVP webhook: answers with whatever status the test sets. */
class PlatformWebhook {
  server!: Server;
  url = '';
  statuses: number[] = [];
  received: { headers: IncomingMessage['headers']; body: any }[] = [];
  async start() {
    this.server = createServer((request, response) => {
      let text = '';
      request.setEncoding('utf8').on('data', (chunk) => {
        text += chunk;
      });
      request.on('end', () => {
        this.received.push({ headers: request.headers, body: JSON.parse(text) });
        response.writeHead(this.statuses.shift() ?? 200).end('{}');
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const address = this.server.address();
    this.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/rsvp`;
  }
}

for (const engine of engines) {
  describe(`RSVP (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    const webhook = new PlatformWebhook();
    before(async () => {
      await webhook.start();
      t = await startTestApp({ engine: engine.name, config: { rsvpWebhookUrl: webhook.url } });
    });
    after(async () => {
      await t?.close();
      webhook.server?.close();
    });

    async function agent(tier = 'member') {
      const member = await t.member(tier);
      return { member, token: await t.token(member, ['events:rsvp', 'membership:read']) };
    }
    const rsvp = (token: string, body: unknown, headers: Record<string, string> = {}) =>
      t.call('POST', RSVP, { token, body, headers });
    /** Delivers whatever earlier tests left queued, so a worker test sees only its own RSVP. */
    async function drainQueue() {
      webhook.statuses = [];
      t.clock.advance(2 * MS.hour);
      while ((await deliverDueRsvps(t.deps)) > 0) t.clock.advance(2 * MS.hour);
      webhook.received = [];
    }
    const stored = (memberId: string) =>
      t.deps.db
        .selectFrom('rsvps')
        .selectAll()
        .where('member_id', '=', memberId)
        .orderBy('created_at')
        .execute();

    test('queued, not confirmed: 202 with the queue shape and a queued row', async () => {
      const { member, token } = await agent();
      const url = await cacheEvent(t, 'rsvp-basic');
      const response = await rsvp(token, { event_url: url.replace('lu.ma', 'luma.com'), name: 'Mina M.' });
      assert.equal(response.status, 202, response.text);
      assert.equal(response.body.ok, true);
      assert.equal(response.body.queued, true);
      assert.equal(response.body.was_dup, false);
      assert.equal(response.body.via, 'agent');
      assert.deepEqual(response.body.rate, { current: 1, remaining: 9, limit: 10 });
      const [row] = await stored(member.id);
      assert.equal(row.id, response.body.id);
      assert.equal(row.event_url, url);
      assert.equal(row.status, 'queued');
      assert.equal(row.name, 'Mina M.');
      assert.equal(row.email, member.email);
      assert.equal(row.token_id, await tokenIdOf(t, token));
    });

    test('a repeat within 7 days is a duplicate that spends nothing; after 7 days it is new', async () => {
      const { member, token } = await agent();
      const url = await cacheEvent(t, 'rsvp-dup', 24 * 20);
      const first = await rsvp(token, { event_url: url });
      const again = await rsvp(token, { event_url: url });
      assert.equal(again.status, 202);
      assert.equal(again.body.was_dup, true);
      assert.equal(again.body.id, first.body.id);
      assert.deepEqual(again.body.rate, { current: 1, remaining: 9, limit: 10 });
      assert.equal((await stored(member.id)).length, 1);
      t.clock.advance(7 * MS.day + MS.second);
      const later = await rsvp(token, { event_url: url });
      assert.equal(later.body.was_dup, false);
      assert.notEqual(later.body.id, first.body.id);
      assert.equal((await stored(member.id)).length, 2);
    });

    test('Idempotency-Key replays the first answer without a second row', async () => {
      const { member, token } = await agent();
      const url = await cacheEvent(t, 'rsvp-idem');
      const key = { 'idempotency-key': `rsvp-${member.id}` };
      const first = await rsvp(token, { event_url: url }, key);
      const replay = await rsvp(token, { event_url: url }, key);
      assert.equal(replay.status, 202);
      assert.equal(replay.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(replay.body, first.body);
      assert.equal((await stored(member.id)).length, 1);
    });

    test('10 per token per UTC day, then 429 until the next UTC day', async () => {
      const { member, token } = await agent();
      t.clock.set(utcDayStart(t.clock.now()) + 20 * MS.hour);
      for (let i = 0; i < 10; i++) {
        const url = await cacheEvent(t, `rsvp-quota-${engine.name}-${i}`);
        assert.equal((await rsvp(token, { event_url: url })).status, 202);
      }
      const url = await cacheEvent(t, `rsvp-quota-${engine.name}-10`);
      const refused = await rsvp(token, { event_url: url });
      assert.equal(refused.status, 429);
      assert.equal(refused.body.error_kind, 'rate_limit');
      assert.equal(refused.body.retry_after_seconds, 4 * 3600);
      assert.equal(refused.headers.get('retry-after'), String(4 * 3600));
      assert.equal((await stored(member.id)).length, 10);
      t.clock.advance(4 * MS.hour);
      assert.equal((await rsvp(token, { event_url: url })).status, 202);
    });

    test('400 off the platform, 404 for an event not in the cache, nothing stored', async () => {
      const { member, token } = await agent();
      const off = await rsvp(token, { event_url: 'https://example.org/some-event' });
      assert.equal(off.status, 400);
      assert.equal(off.body.error, 'non_canonical_url');
      const unknown = await rsvp(token, { event_url: 'https://lu.ma/not-cached' });
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.error, 'event_not_found');
      const oversize = await rsvp(token, { event_url: 'https://lu.ma/x', name: 'n'.repeat(9000) });
      assert.equal(oversize.status, 413);
      assert.equal((await stored(member.id)).length, 0);
    });

    test('scope and tier: a token without events:rsvp, and a demoted member, get 403', async () => {
      const member = await t.member('member');
      const readOnly = await t.token(member, ['membership:read']);
      const url = await cacheEvent(t, 'rsvp-scope');
      const noScope = await rsvp(readOnly, { event_url: url });
      assert.equal(noScope.status, 403);
      assert.equal(noScope.body.error, 'insufficient_scope');
      assert.equal(noScope.body.tier, 'member');
      const { member: demoted, token } = await agent();
      await t.deps.db.updateTable('members').set({ tier: 'public' }).where('id', '=', demoted.id).execute();
      const refused = await rsvp(token, { event_url: url });
      assert.equal(refused.status, 403);
      assert.equal(refused.body.error, 'tier_insufficient');
      assert.equal(refused.body.tier, 'public');
      assert.equal((await stored(demoted.id)).length, 0);
    });

    test('a sandbox token gets the receipt and changes nothing', async () => {
      const member = await t.member('member');
      const token = await t.token(member, ['events:rsvp'], { sandbox: true });
      const url = await cacheEvent(t, 'rsvp-sandbox');
      const before = await rowCounts(t, ['rsvps', 'counters', 'event_log']);
      const response = await rsvp(token, { event_url: url });
      assert.equal(response.status, 200);
      assert.deepEqual(response.body.would_have, {
        action: 'rsvpToEvent',
        scope: 'events:rsvp',
        args: { event_url: url },
      });
      assert.equal(response.body.sandbox, true);
      assert.equal(response.body.simulated, true);
      const afterCounts = await rowCounts(t, ['rsvps', 'event_log']);
      assert.deepEqual(afterCounts, { rsvps: before.rsvps, event_log: before.event_log });
    });

    test('the worker delivers to the platform, retries a failure with backoff, then confirms in the event log', async () => {
      await drainQueue();
      const { member, token } = await agent();
      const url = await cacheEvent(t, 'rsvp-deliver');
      const queued = await rsvp(token, { event_url: url });
      webhook.received = [];
      webhook.statuses = [503];
      await deliverDueRsvps(t.deps);
      let [row] = await stored(member.id);
      assert.equal(row.status, 'queued');
      assert.equal(Number(row.attempts), 1);
      assert.equal(row.last_error, 'HTTP 503');
      assert.equal(Number(row.next_attempt_at), t.clock.now() + 30 * MS.second);
      await deliverDueRsvps(t.deps);
      assert.equal(webhook.received.length, 1, 'not retried before the backoff ends');
      t.clock.advance(30 * MS.second);
      await deliverDueRsvps(t.deps);
      assert.equal(webhook.received.length, 2);
      for (const delivery of webhook.received) {
        assert.equal(delivery.headers['idempotency-key'], queued.body.id);
        assert.deepEqual(
          { rsvp_id: delivery.body.rsvp_id, event_url: delivery.body.event_url, email: delivery.body.email },
          { rsvp_id: queued.body.id, event_url: url, email: member.email },
        );
      }
      [row] = await stored(member.id);
      assert.equal(row.status, 'confirmed');
      assert.equal(Number(row.settled_at), t.clock.now());
      const [confirmed] = await loggedEvents(t, member.id, 'rsvp_confirmed');
      assert.deepEqual(confirmed.target, { rsvp_id: queued.body.id, event_url: url });
      await deliverDueRsvps(t.deps);
      assert.equal(webhook.received.length, 2, 'a confirmed RSVP is never sent again');
      assert.equal((await loggedEvents(t, member.id, 'rsvp_confirmed')).length, 1);
    });

    test('a permanent refusal by the platform fails the RSVP and says so in the event log', async () => {
      await drainQueue();
      const { member, token } = await agent();
      const url = await cacheEvent(t, 'rsvp-refused');
      await rsvp(token, { event_url: url });
      webhook.statuses = [422];
      await deliverDueRsvps(t.deps);
      const [row] = await stored(member.id);
      assert.equal(row.status, 'failed');
      assert.equal(row.last_error, 'HTTP 422');
      const [failed] = await loggedEvents(t, member.id, 'rsvp_failed');
      assert.deepEqual(failed.payload, { reason: 'HTTP 422' });
      assert.equal(
        (await rsvp(token, { event_url: url })).body.was_dup,
        false,
        'a failed RSVP can be sent again',
      );
    });

    test('a job whose worker died mid-delivery is taken up again when its lease ends, once', async () => {
      await drainQueue();
      const { member, token } = await agent();
      const url = await cacheEvent(t, 'rsvp-lease');
      await rsvp(token, { event_url: url });
      // A worker that claimed the job and then died: the lease is set, nothing settled.
      await t.deps.db
        .updateTable('rsvps')
        .set({ locked_until: t.clock.now() + 60 * MS.second })
        .where('member_id', '=', member.id)
        .execute();
      webhook.received = [];
      await deliverDueRsvps(t.deps);
      assert.equal(webhook.received.length, 0, 'a live lease is respected');
      t.clock.advance(61 * MS.second);
      await deliverDueRsvps(t.deps);
      await deliverDueRsvps(t.deps);
      assert.equal(webhook.received.length, 1);
      const [row] = await stored(member.id);
      assert.equal(row.status, 'confirmed');
      assert.equal((await loggedEvents(t, member.id, 'rsvp_confirmed')).length, 1);
    });
  });
}

describe('RSVP in local-only mode (no platform webhook)', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t?.close());

  test('the RSVP is recorded here and confirmed by the worker', async () => {
    const member = await t.member('member');
    const token = await t.token(member, ['events:rsvp']);
    const url = await cacheEvent(t, 'local-only');
    const response = await t.call('POST', RSVP, { token, body: { event_url: url } });
    assert.equal(response.status, 202);
    assert.equal(await deliverDueRsvps(t.deps), 1);
    const row = await t.deps.db
      .selectFrom('rsvps')
      .selectAll()
      .where('id', '=', response.body.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.status, 'confirmed');
    assert.equal((await loggedEvents(t, member.id, 'rsvp_confirmed')).length, 1);
  });
});
