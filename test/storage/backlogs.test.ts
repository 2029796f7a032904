// The backlogs repository's contract: the same counts on both engines.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { backlogs } from '../../src/storage/backlogs.ts';
import { highlights } from '../../src/storage/highlights.ts';
import { engines } from '../support/databases.ts';
import { storageUnderTest } from '../support/storage.ts';

for (const engine of engines) {
  describe(`backlogs repository (${engine.name})`, { skip: engine.skip }, () => {
    const storage = storageUnderTest(engine.name);

    test('an empty queue waits for nothing; pending stories count until they expire', async () => {
      assert.deepEqual(await backlogs.of(storage.db, 'feedback', 0), { waiting: 0, oldest: null });
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
      assert.deepEqual(await backlogs.of(storage.db, 'highlights', 500), { waiting: 2, oldest: 100 });
      assert.deepEqual(await backlogs.of(storage.db, 'highlights', 1000), { waiting: 1, oldest: 200 });
      for (const queue of ['tier_requests', 'event_requests', 'rsvps', 'bookings'] as const)
        assert.deepEqual(await backlogs.of(storage.db, queue, 0), { waiting: 0, oldest: null }, queue);
    });
  });
}
