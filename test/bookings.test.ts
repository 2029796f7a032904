import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { MS } from '../src/clock.ts';
import { createSession, SESSION_COOKIE } from '../src/domain/auth/sessions.ts';
import { settleQueuedBookings } from '../src/domain/resources/booking-settlement.ts';
import { saveResource } from '../src/domain/resources/resources.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { loggedEvents, rowCounts, tokenIdOf } from './support/community.ts';
import { engines, freshDatabase } from './support/databases.ts';
import { killAllChildren, runCli, startCli } from './support/processes.ts';
import { waitUntil } from './support/wait.ts';

const BOOK = '/api/resources/book';
const ALWAYS = { weekdays: '00:00-24:00', weekends: '00:00-24:00' };

/** Midnight UTC of the next Wednesday after the clock: a weekday, far enough ahead for any test. */
function nextWednesday(now: number): number {
  const midnight = now - (now % MS.day) + MS.day;
  const weekday = new Date(midnight).getUTCDay();
  return midnight + ((3 - weekday + 7) % 7) * MS.day;
}
const iso = (ms: number) => new Date(ms).toISOString();

for (const engine of engines) {
  describe(`resources and bookings (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    let day: number;
    before(async () => {
      t = await startTestApp({ engine: engine.name });
      day = nextWednesday(t.clock.now()) + 7 * MS.day;
      await saveResource(t.deps.db, {
        id: 'room-a',
        kind: 'room',
        name: 'Room A',
        capacity: 8,
        openHours: ALWAYS,
        bookable: true,
      });
      await saveResource(t.deps.db, {
        id: 'printer-1',
        kind: 'printer',
        name: 'Printer',
        capacity: 1,
        openHours: { weekdays: '09:00-17:00', weekends: 'closed' },
        bookable: true,
      });
      await saveResource(t.deps.db, {
        id: 'room-closed',
        kind: 'room',
        name: 'Shut',
        capacity: 2,
        openHours: ALWAYS,
        bookable: false,
      });
    });
    after(() => t?.close());

    async function booker(scopes = ['resources:book', 'resources:read']) {
      const member = await t.member('core');
      return { member, token: await t.token(member, scopes) };
    }
    const book = (token: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
      t.call('POST', BOOK, { token, body, headers });
    const slot = (
      resource: string,
      fromHour: number,
      hours: number,
      extra: Record<string, unknown> = {},
    ) => ({
      resource_id: resource,
      start_iso: iso(day + fromHour * MS.hour),
      end_iso: iso(day + (fromHour + hours) * MS.hour),
      email: 'agent-owner@test.example',
      ...extra,
    });
    const bookingsOf = (memberId: string) =>
      t.deps.db
        .selectFrom('bookings')
        .selectAll()
        .where('member_id', '=', memberId)
        .orderBy('created_at')
        .execute();
    async function settleAll() {
      while ((await settleQueuedBookings(t.deps)) > 0);
    }

    test('queued, not confirmed: 202, purpose trimmed and clipped to 600, stored as queued', async () => {
      const { member, token } = await booker();
      const purpose = `  ${'p'.repeat(700)}  `;
      const response = await book(token, slot('room-a', 10, 2, { purpose }));
      assert.equal(response.status, 202, response.text);
      assert.deepEqual(
        {
          ok: response.body.ok,
          queued: response.body.queued,
          was_dup: response.body.was_dup,
          via: response.body.via,
        },
        { ok: true, queued: true, was_dup: false, via: 'agent' },
      );
      assert.deepEqual(response.body.rate, { current: 1, remaining: 9, limit: 10 });
      const [row] = await bookingsOf(member.id);
      assert.equal(row.id, response.body.id);
      assert.equal(row.status, 'queued');
      assert.equal(row.purpose, 'p'.repeat(600));
      assert.equal(row.email, 'agent-owner@test.example');
      assert.equal(Number(row.start_at), day + 10 * MS.hour);
      assert.equal(row.token_id, await tokenIdOf(t, token));
    });

    test('agents must send email; bad ranges are 400; unknown or unbookable resources 404', async () => {
      const { member, token } = await booker();
      const { email: _email, ...noEmail } = slot('room-a', 12, 1);
      const missing = await book(token, noEmail);
      assert.equal(missing.status, 400);
      assert.equal(missing.body.error, 'email_required');
      const backwards = await book(token, { ...slot('room-a', 12, 1), end_iso: iso(day) });
      assert.equal(backwards.body.error, 'invalid_time_range');
      const past = await book(token, {
        ...slot('room-a', 0, 1),
        start_iso: iso(t.clock.now() - MS.hour),
        end_iso: iso(t.clock.now()),
      });
      assert.equal(past.body.error, 'start_in_past');
      const long = await book(token, slot('room-a', 0, 13));
      assert.equal(long.body.error, 'booking_too_long');
      for (const resource of ['no-such-room', 'room-closed']) {
        const response = await book(token, slot(resource, 12, 1));
        assert.equal(response.status, 404, resource);
        assert.equal(response.body.error, 'unknown_resource');
      }
      assert.equal((await bookingsOf(member.id)).length, 0);
    });

    test('a browser session may book without email (the member’s is used); via is session', async () => {
      const member = await t.member('core');
      const session = await createSession(t.deps.db, t.clock, member.id);
      const { email: _email, ...body } = slot('room-a', 14, 1);
      const response = await t.call('POST', BOOK, {
        body,
        headers: { cookie: `${SESSION_COOKIE}=${session}` },
      });
      assert.equal(response.status, 202, response.text);
      assert.equal(response.body.via, 'session');
      const [row] = await bookingsOf(member.id);
      assert.equal(row.email, member.email);
      assert.equal(row.token_id, null);
    });

    test('the exact same start time within 30 days is a duplicate; Idempotency-Key replays', async () => {
      const { member, token } = await booker();
      const first = await book(token, slot('room-a', 16, 1));
      const again = await book(token, slot('room-a', 16, 2));
      assert.equal(again.body.was_dup, true);
      assert.equal(again.body.id, first.body.id);
      assert.equal(again.body.rate.current, 1);
      const key = { 'idempotency-key': `book-${member.id}` };
      const keyed = await book(token, slot('room-a', 18, 1), key);
      const replay = await book(token, slot('room-a', 18, 1), key);
      assert.equal(replay.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(replay.body, keyed.body);
      assert.equal((await bookingsOf(member.id)).length, 2);
    });

    test('10 booking requests per token per UTC day', async () => {
      const { member, token } = await booker();
      for (let i = 0; i < 10; i++)
        assert.equal((await book(token, slot('printer-1', 9 + i * 0.5, 0.5))).status, 202);
      const refused = await book(token, slot('printer-1', 15, 0.5));
      assert.equal(refused.status, 429);
      assert.equal(refused.body.error_kind, 'rate_limit');
      assert.equal((await bookingsOf(member.id)).length, 10);
    });

    test('scope and tier refusals, and a sandbox receipt that changes nothing', async () => {
      const reader = await booker(['resources:read']);
      const noScope = await book(reader.token, slot('room-a', 20, 1));
      assert.equal(noScope.status, 403);
      assert.equal(noScope.body.error, 'insufficient_scope');
      const resident = await t.member('resident');
      const residentToken = await t.token(resident, ['resources:read']);
      assert.equal((await t.call('GET', '/api/resources/list', { token: residentToken })).status, 200);
      const member = await t.member('core');
      const sandbox = await t.token(member, ['resources:book'], { sandbox: true });
      const before = await rowCounts(t, ['bookings', 'event_log']);
      const receipt = await book(sandbox, slot('room-a', 20, 1));
      assert.equal(receipt.status, 200);
      assert.equal(receipt.body.simulated, true);
      assert.equal(receipt.body.would_have.action, 'bookResource');
      assert.deepEqual(await rowCounts(t, ['bookings', 'event_log']), before);
    });

    test('the worker confirms, declines overlaps and out-of-hours requests, and logs each outcome', async () => {
      await settleAll();
      const a = await booker();
      const b = await booker();
      const printer = await booker();
      const first = await book(a.token, slot('room-a', 3, 2));
      const overlapping = await book(b.token, slot('room-a', 4, 2));
      const adjacent = await book(b.token, slot('room-a', 5, 1));
      const early = await book(printer.token, slot('printer-1', 7, 1));
      assert.equal(await settleQueuedBookings(t.deps), 4);
      const status = async (id: string) =>
        await t.deps.db
          .selectFrom('bookings')
          .select(['status', 'reason'])
          .where('id', '=', id)
          .executeTakeFirstOrThrow();
      assert.deepEqual(await status(first.body.id), { status: 'confirmed', reason: null });
      assert.deepEqual(await status(overlapping.body.id), {
        status: 'declined',
        reason: 'overlaps_another_booking',
      });
      assert.deepEqual(await status(adjacent.body.id), { status: 'confirmed', reason: null });
      assert.deepEqual(await status(early.body.id), { status: 'declined', reason: 'outside_opening_hours' });
      const [confirmed] = await loggedEvents(t, a.member.id, 'booking_confirmed');
      assert.deepEqual(confirmed.target, {
        booking_id: first.body.id,
        resource_id: 'room-a',
        start: iso(day + 3 * MS.hour),
        end: iso(day + 5 * MS.hour),
      });
      const [declined] = await loggedEvents(t, b.member.id, 'booking_declined');
      assert.deepEqual(declined.payload, { reason: 'overlaps_another_booking' });
      assert.equal(declined.actions[1].mcp_tool, 'ic_resources_book');
      assert.equal(await settleQueuedBookings(t.deps), 0, 'nothing is decided twice');
    });

    test('the listing shows confirmed bookings ahead and the staleness gauge of the queue', async () => {
      await settleAll();
      t.clock.set(day - 2 * MS.day);
      const { token } = await booker();
      await book(token, slot('room-a', 22, 1));
      t.clock.advance(6 * MS.minute);
      const listing = await t.call('GET', '/api/resources/list', { token });
      assert.equal(listing.status, 200);
      assert.equal(listing.body.via, 'agent');
      assert.equal(listing.body.stale, true);
      assert.deepEqual(listing.body.queue, { queued: 1, oldest_queued_age_s: 360 });
      const room = listing.body.resources.find((r: { id: string }) => r.id === 'room-a');
      assert.deepEqual(room.open_hours, ALWAYS);
      assert.equal(room.capacity, 8);
      assert.equal(room.queued_requests, 1);
      assert.ok(room.busy.some((b: { start: string }) => b.start === iso(day + 3 * MS.hour)));
      await settleAll();
      const after = await t.call('GET', '/api/resources/list', { token });
      assert.equal(after.body.stale, false);
      assert.deepEqual(after.body.queue, { queued: 0, oldest_queued_age_s: null });
    });
  });
}

const postgres = engines.find((e) => e.name === 'postgres')!;

describe('booking workers as separate processes (postgres)', { skip: postgres.skip }, () => {
  after(killAllChildren);

  test('two worker processes racing over overlapping requests never double-book, and decide each once', async () => {
    const database = await freshDatabase('postgres');
    const t = await startTestApp({ database, limits: { bookingsPerDay: 1000 } });
    try {
      t.clock.set(Date.now());
      await saveResource(t.deps.db, {
        id: 'hot-room',
        kind: 'room',
        name: 'Hot',
        capacity: 4,
        openHours: ALWAYS,
        bookable: true,
      });
      const member = await t.member('core');
      const token = await t.token(member, ['resources:book']);
      const day = nextWednesday(Date.now()) + 7 * MS.day;
      // 40 requests in a chain: one-hour slots half an hour apart, each overlapping its neighbours.
      for (let i = 0; i < 40; i++) {
        const start = day + i * 30 * MS.minute;
        const response = await t.call('POST', BOOK, {
          token,
          body: {
            resource_id: 'hot-room',
            start_iso: iso(start),
            end_iso: iso(start + MS.hour),
            email: 'x@test.example',
          },
        });
        assert.equal(response.status, 202, response.text);
      }
      const workers = await Promise.all(
        [1, 2].map(() => runCli(database.url, ['worker', '--drain', '--batch', '1'])),
      );
      for (const worker of workers) assert.equal(worker.code, 0, worker.stderr);
      const settled = workers.map((w) => JSON.parse(w.stdout).bookings as number);
      assert.equal(settled[0] + settled[1], 40);
      const rows = await t.deps.db.selectFrom('bookings').selectAll().orderBy('start_at').execute();
      assert.ok(rows.every((r) => r.status !== 'queued'));
      const confirmed = rows.filter((r) => r.status === 'confirmed');
      for (let i = 1; i < confirmed.length; i++)
        assert.ok(
          Number(confirmed[i].start_at) >= Number(confirmed[i - 1].end_at),
          'confirmed bookings overlap',
        );
      // Which of two neighbours wins depends on the race, but nothing is declined without a cause:
      // every declined request overlaps a confirmed booking (the confirmed set is maximal, so at
      // least a third of the chain of 40).
      const declined = rows.filter((r) => r.status === 'declined');
      assert.equal(confirmed.length + declined.length, 40);
      for (const d of declined)
        assert.ok(
          confirmed.some(
            (c) => Number(c.start_at) < Number(d.end_at) && Number(d.start_at) < Number(c.end_at),
          ),
          `declined without an overlapping confirmed booking: ${d.start_at}`,
        );
      assert.ok(confirmed.length >= 14, `confirmed: ${confirmed.length}`);
      const outcomes =
        (await loggedEvents(t, member.id, 'booking_confirmed')).length +
        (await loggedEvents(t, member.id, 'booking_declined')).length;
      assert.equal(outcomes, 40, 'each request decided exactly once');
    } finally {
      await t.close();
      await database.drop();
    }
  });

  test('a worker killed mid-job leaves the booking to be decided again after its lease, exactly once', async () => {
    const database = await freshDatabase('postgres');
    const t = await startTestApp({ database });
    const blocker = new pg.Client({ connectionString: database.url });
    try {
      t.clock.set(Date.now());
      await saveResource(t.deps.db, {
        id: 'room-k',
        kind: 'room',
        name: 'K',
        capacity: 4,
        openHours: ALWAYS,
        bookable: true,
      });
      const member = await t.member('core');
      const token = await t.token(member, ['resources:book']);
      const start = nextWednesday(Date.now()) + 7 * MS.day;
      const queued = await t.call('POST', BOOK, {
        token,
        body: {
          resource_id: 'room-k',
          start_iso: iso(start),
          end_iso: iso(start + MS.hour),
          email: 'k@test.example',
        },
      });
      // Hold the resource's row lock so the worker stops inside the settling transaction.
      await blocker.connect();
      await blocker.query('begin');
      await blocker.query("select id from resources where id = 'room-k' for update");
      const worker = startCli(database.url, ['worker', '--once'], { WORKER_LEASE_SECONDS: '2' });
      const claimed = async () =>
        (
          await t.deps.db
            .selectFrom('bookings')
            .select('locked_until')
            .where('id', '=', queued.body.id)
            .executeTakeFirstOrThrow()
        ).locked_until !== null;
      await waitUntil(claimed, 'the worker to claim the job', { timeoutMs: 30_000, everyMs: 100 }).catch(
        (error: Error) => assert.fail(`${error.message}: ${worker.output.stderr}`),
      );
      const killed = await worker.kill('SIGKILL');
      assert.equal(killed.signal, 'SIGKILL');
      await blocker.query('rollback');
      const row = await t.deps.db
        .selectFrom('bookings')
        .selectAll()
        .where('id', '=', queued.body.id)
        .executeTakeFirstOrThrow();
      assert.equal(row.status, 'queued', 'the killed worker settled nothing');
      // The lease the killed worker took runs out at locked_until: wait for that moment, not a guess.
      const leaseEnds = Number(row.locked_until);
      assert.ok(leaseEnds > 0, 'the killed worker left its lease');
      await waitUntil(() => Date.now() > leaseEnds, "the killed worker's lease to run out", {
        everyMs: Math.max(1, leaseEnds - Date.now() + 1),
      });
      const retry = await runCli(database.url, ['worker', '--drain'], { env: { WORKER_LEASE_SECONDS: '2' } });
      assert.equal(retry.code, 0, retry.stderr);
      assert.equal(JSON.parse(retry.stdout).bookings, 1);
      const settled = await t.deps.db
        .selectFrom('bookings')
        .selectAll()
        .where('id', '=', queued.body.id)
        .executeTakeFirstOrThrow();
      assert.equal(settled.status, 'confirmed');
      assert.equal((await loggedEvents(t, member.id, 'booking_confirmed')).length, 1);
    } finally {
      await blocker.end().catch(() => {});
      await t.close();
      await database.drop();
    }
  });
});
