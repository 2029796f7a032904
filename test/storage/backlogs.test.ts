// The backlogs repository's contract: the same counts on both engines.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BACKLOG_COUNT_LIMIT, backlogs } from '../../src/storage/backlogs.ts';
import { highlights } from '../../src/storage/highlights.ts';
import { engines } from '../support/databases.ts';
import { storageUnderTest } from '../support/storage.ts';

for (const engine of engines) {
  describe(`backlogs repository (${engine.name})`, { skip: engine.skip }, () => {
    const storage = storageUnderTest(engine.name);

    test('an empty queue waits for nothing; pending stories count until they expire', async () => {
      assert.deepEqual(await backlogs.of(storage.db, 'feedback', 0), {
        waiting: 0,
        oldest: null,
        more: false,
      });
      const ada = await storage.member('Ada');
      const story = (id: string, now: number, expiresAt: number) => ({
        id,
        memberId: ada,
        tokenId: 't',
        story: '{}',
        now,
        expiresAt,
      });
      await highlights.insertPending(storage.db, story('h1', 100, 1000));
      await highlights.insertPending(storage.db, story('h2', 200, 5000));
      assert.deepEqual(await backlogs.of(storage.db, 'highlights', 500), {
        waiting: 2,
        oldest: 100,
        more: false,
      });
      assert.deepEqual(await backlogs.of(storage.db, 'highlights', 1000), {
        waiting: 1,
        oldest: 200,
        more: false,
      });
      for (const queue of ['tier_requests', 'event_requests', 'rsvps', 'bookings'] as const)
        assert.deepEqual(
          await backlogs.of(storage.db, queue, 0),
          { waiting: 0, oldest: null, more: false },
          queue,
        );
    });

    test('a queue is counted up to its bound, and says more wait past it', async () => {
      const ticket = (i: number) => ({
        ticket_id: `fb_${String(i).padStart(5, '0')}`,
        member_id: null,
        token_id: null,
        category: 'bug',
        category_text: null,
        priority: 'normal',
        message: 'm',
        url: null,
        expected: null,
        got: null,
        agent_id: null,
        contact: null,
        ip_hash: 'h',
        warnings: '[]',
        status: 'open',
        created_at: 10 + i,
      });
      const rows = Array.from({ length: BACKLOG_COUNT_LIMIT }, (_, i) => ticket(i));
      for (let i = 0; i < rows.length; i += 100)
        await storage.db
          .insertInto('feedback')
          .values(rows.slice(i, i + 100))
          .execute();
      assert.deepEqual(await backlogs.of(storage.db, 'feedback', 0), {
        waiting: BACKLOG_COUNT_LIMIT,
        oldest: 10,
        more: false,
      });
      await storage.db.insertInto('feedback').values(ticket(BACKLOG_COUNT_LIMIT)).execute();
      assert.deepEqual(await backlogs.of(storage.db, 'feedback', 0), {
        waiting: BACKLOG_COUNT_LIMIT,
        oldest: 10,
        more: true,
      });
    });
  });
}
