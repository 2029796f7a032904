// The resources, bookings and queue repositories' contract: the same calls give the same rows on
// both engines.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { bookings } from '../../src/storage/bookings.ts';
import { queue } from '../../src/storage/queue.ts';
import { resources } from '../../src/storage/resources.ts';
import type { BookingsTable } from '../../src/storage/schema.ts';
import { transact } from '../../src/storage/transactions.ts';
import { engines } from '../support/databases.ts';
import { storageUnderTest } from '../support/storage.ts';

const HOUR = 3_600_000;

for (const engine of engines) {
  describe(`resources repositories (${engine.name})`, { skip: engine.skip }, () => {
    const storage = storageUnderTest(engine.name);
    const room = (id: string, name: string, kind = 'room') => ({
      id,
      kind,
      name,
      capacity: 4,
      open_hours: '{}',
      bookable: 1,
    });
    const booking = (id: string, memberId: string, start: number, status = 'queued'): BookingsTable => ({
      id,
      resource_id: 'r1',
      member_id: memberId,
      token_id: null,
      start_at: start,
      end_at: start + HOUR,
      purpose: 'p',
      email: null,
      status,
      reason: null,
      created_at: storage.clock.now(),
      locked_until: null,
      settled_at: null,
    });

    test('resources: saved, replaced by id, listed by kind then name, locked in a transaction', async () => {
      await resources.save(storage.db, room('r1', 'Blue'));
      await resources.save(storage.db, room('r2', 'Alpha', 'printer'));
      await resources.save(storage.db, room('r3', 'Attic'));
      await resources.save(storage.db, { ...room('r1', 'Blue room'), capacity: 6 });
      assert.deepEqual(
        (await resources.all(storage.db)).map((r) => [r.id, r.name]),
        [
          ['r2', 'Alpha'],
          ['r3', 'Attic'],
          ['r1', 'Blue room'],
        ],
      );
      assert.equal(Number((await resources.byId(storage.db, 'r1'))?.capacity), 6);
      assert.equal(await resources.byId(storage.db, 'none'), undefined);
      await transact(storage.port, (trx) => resources.lockForDecision(trx, 'r1'));
    });

    test('resources: insert adds a new one and refuses an id taken', async () => {
      await resources.insert(storage.db, room('r4', 'Cellar'));
      assert.equal((await resources.byId(storage.db, 'r4'))?.name, 'Cellar');
      await assert.rejects(resources.insert(storage.db, room('r4', 'Cellar again')));
      assert.equal((await resources.byId(storage.db, 'r4'))?.name, 'Cellar');
    });

    test('bookings: the same request found again, overlaps with confirmed ones, the member page', async () => {
      const ada = await storage.member('Ada');
      const start = storage.clock.now() + 10 * HOUR;
      await bookings.insert(storage.db, booking('b1', ada, start));
      await bookings.insert(storage.db, booking('b2', ada, start + 2 * HOUR, 'confirmed'));
      const request = { memberId: ada, resourceId: 'r1', start };
      assert.equal(await bookings.sameRequestSince(storage.db, request, 0), 'b1');
      assert.equal(await bookings.sameRequestSince(storage.db, request, storage.clock.now()), undefined);
      assert.equal(
        await bookings.overlapsConfirmed(storage.db, 'r1', start + 2.5 * HOUR, start + 4 * HOUR),
        true,
      );
      assert.equal(
        await bookings.overlapsConfirmed(storage.db, 'r1', start + 3 * HOUR, start + 4 * HOUR),
        false,
      );
      assert.equal(
        await bookings.overlapsConfirmed(storage.db, 'r1', start, start + HOUR),
        false,
        'b1 is only queued',
      );
      const ahead = await bookings.queuedAndAhead(storage.db, storage.clock.now(), start + 2 * HOUR);
      assert.deepEqual(
        ahead.map((b) => b.status),
        ['queued'],
        'a confirmed booking past the horizon is left out',
      );
      assert.deepEqual(
        (await bookings.pageOfMember(storage.db, ada, { limit: 50 })).rows.map((b) => [b.id, b.name]),
        [
          ['b2', 'Blue room'],
          ['b1', 'Blue room'],
        ],
      );
      const first = await bookings.pageOfMember(storage.db, ada, { limit: 1 });
      assert.ok(first.next);
      const second = await bookings.pageOfMember(storage.db, ada, { limit: 1, after: first.next });
      assert.deepEqual(
        [...first.rows, ...second.rows].map((b) => b.id),
        ['b2', 'b1'],
        'pages of one chain by the cursor',
      );
      assert.equal(second.next, null);
      assert.equal((await bookings.get(storage.db, 'b1')).status, 'queued');
      await assert.rejects(bookings.get(storage.db, 'none'));
    });

    test('queue: a due job is leased once, settled only under its own lease, due again once it ran out', async () => {
      const bo = await storage.member('Bo');
      const now = storage.clock.now() + HOUR;
      await bookings.insert(storage.db, booking('q1', bo, now + 20 * HOUR));
      const due = await queue.due(storage.db, 'bookings', now, 100);
      assert.ok(due.some((job) => job.id === 'q1' && job.locked_until === null));
      assert.equal(await queue.lease(storage.db, 'bookings', 'q1', now, now + 1000), true);
      assert.equal(await queue.lease(storage.db, 'bookings', 'q1', now, now + 2000), false);
      assert.ok(!(await queue.due(storage.db, 'bookings', now, 100)).some((job) => job.id === 'q1'));
      assert.equal(
        await queue.settle(storage.db, 'bookings', 'q1', now + 999, { status: 'confirmed' }),
        false,
      );
      const later = await queue.due(storage.db, 'bookings', now + 1000, 100);
      assert.equal(Number(later.find((job) => job.id === 'q1')?.locked_until), now + 1000);
      assert.equal(await queue.lease(storage.db, 'bookings', 'q1', now + 1000, now + 5000), true);
      assert.equal(
        await queue.settle(storage.db, 'bookings', 'q1', now + 5000, { status: 'confirmed' }),
        true,
      );
      const settled = await bookings.get(storage.db, 'q1');
      assert.deepEqual([settled.status, settled.locked_until], ['confirmed', null]);
    });

    test('queue: a backlog counts the queued jobs, their live leases and the earliest due time reached', async () => {
      const cy = await storage.member('Cy');
      // Written as fixture rows: the RSVP worker's own rules are not what this suite tests.
      const rsvp = async (id: string, due: number, lockedUntil: number | null, status = 'queued') => {
        await storage.db
          .insertInto('rsvps')
          .values({
            id,
            event_url: `https://events.example.org/${id}`,
            member_id: cy,
            token_id: null,
            email: null,
            name: null,
            status,
            created_at: 1,
            attempts: 0,
            next_attempt_at: due,
            locked_until: lockedUntil,
            settled_at: null,
            last_error: null,
          })
          .execute();
      };
      assert.deepEqual(await queue.backlog(storage.db, 'rsvps', 1000), {
        queued: 0,
        leased: 0,
        oldestDue: null,
      });
      await rsvp('r_due', 400, null);
      await rsvp('r_leased', 300, 2000);
      await rsvp('r_lease_over', 600, 900);
      await rsvp('r_later', 5000, null);
      await rsvp('r_done', 100, null, 'confirmed');
      assert.deepEqual(await queue.backlog(storage.db, 'rsvps', 1000), {
        queued: 4,
        leased: 1,
        oldestDue: 300,
      });
      assert.deepEqual(await queue.backlog(storage.db, 'rsvps', 200), {
        queued: 4,
        leased: 2,
        oldestDue: null,
      });
      const bookingsBacklog = await queue.backlog(storage.db, 'bookings', storage.clock.now() + HOUR);
      assert.equal(bookingsBacklog.queued, 1, 'b1 is the one booking still queued');
      assert.equal(bookingsBacklog.oldestDue, storage.clock.now());
    });
  });
}
