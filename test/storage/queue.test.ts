// The work queues' repository contract: the same jobs give the same backlog and leases on both engines.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { queue } from '../../src/storage/queue.ts';
import { engines } from '../support/databases.ts';
import { storageUnderTest } from '../support/storage.ts';

for (const engine of engines) {
  describe(`queue repository (${engine.name})`, { skip: engine.skip }, () => {
    const storage = storageUnderTest(engine.name);
    // Written as fixture rows: the RSVP worker's own rules are not what this suite tests.
    async function rsvp(
      id: string,
      memberId: string,
      due: number,
      lockedUntil: number | null,
      status = 'queued',
    ) {
      await storage.db
        .insertInto('rsvps')
        .values({
          id,
          event_url: `https://events.example.org/${id}`,
          member_id: memberId,
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
    }

    test('an empty queue has no backlog', async () => {
      assert.deepEqual(await queue.backlog(storage.db, 'rsvps', 1000), {
        queued: 0,
        leased: 0,
        oldestDue: null,
      });
      assert.deepEqual(await queue.backlog(storage.db, 'bookings', 1000), {
        queued: 0,
        leased: 0,
        oldestDue: null,
      });
    });

    test('the backlog counts queued jobs, live leases and the earliest due time reached', async () => {
      const ada = await storage.member('Ada');
      await rsvp('r_due', ada, 400, null);
      await rsvp('r_leased', ada, 300, 2000);
      await rsvp('r_lease_over', ada, 600, 900);
      await rsvp('r_later', ada, 5000, null);
      await rsvp('r_done', ada, 100, null, 'confirmed');
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
    });

    test('due jobs come by due time, unleased only; a lease is taken once', async () => {
      const due = await queue.due(storage.db, 'rsvps', 1000, 10);
      assert.deepEqual(
        due.map((job) => job.id),
        ['r_due', 'r_lease_over'],
      );
      assert.equal(await queue.lease(storage.db, 'rsvps', 'r_due', 1000, 3000), true);
      assert.equal(await queue.lease(storage.db, 'rsvps', 'r_due', 1000, 3000), false);
      assert.equal(await queue.settle(storage.db, 'rsvps', 'r_due', 2999, { status: 'confirmed' }), false);
      assert.equal(await queue.settle(storage.db, 'rsvps', 'r_due', 3000, { status: 'confirmed' }), true);
      assert.deepEqual(await queue.backlog(storage.db, 'rsvps', 1000), {
        queued: 3,
        leased: 1,
        oldestDue: 300,
      });
    });
  });
}
