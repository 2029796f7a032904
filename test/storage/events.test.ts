// The events, event-requests and RSVPs repositories' contract: the same calls give the same rows
// on both engines.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { eventRequests } from '../../src/storage/event-requests.ts';
import { type EventColumns, events } from '../../src/storage/events.ts';
import { rsvps } from '../../src/storage/rsvps.ts';
import type { EventRequestsTable, RsvpsTable } from '../../src/storage/schema.ts';
import { engines } from '../support/databases.ts';
import { storageUnderTest } from '../support/storage.ts';

const HOUR = 3_600_000;

for (const engine of engines) {
  describe(`events repositories (${engine.name})`, { skip: engine.skip }, () => {
    const storage = storageUnderTest(engine.name);
    const columns = (title: string, start: number, end: number | null, source = 'feed'): EventColumns => ({
      title,
      start_at: start,
      end_at: end,
      location: null,
      cover_url: null,
      description: null,
      updated_at: start,
      source,
    });

    test('upcoming: not ended (by end, else start), soonest first; counted the same', async () => {
      const now = storage.clock.now();
      await events.upsertByUrl(storage.db, 'e1', 'https://x/1', columns('later', now + 2 * HOUR, null));
      await events.upsertByUrl(storage.db, 'e2', 'https://x/2', columns('ongoing', now - HOUR, now + HOUR));
      await events.upsertByUrl(storage.db, 'e3', 'https://x/3', columns('over', now - 2 * HOUR, now - HOUR));
      await events.upsertByUrl(storage.db, 'e4', 'https://x/4', columns('started', now - 1, null));
      assert.deepEqual(
        (await events.upcoming(storage.db, now, 10)).map((row) => row.title),
        ['ongoing', 'later'],
      );
      assert.deepEqual(
        (await events.upcoming(storage.db, now, 1)).map((row) => row.title),
        ['ongoing'],
      );
      assert.equal(await events.countUpcoming(storage.db, now), 2);
    });

    test('upsert by URL keeps the first id; removal and lookups by URL and source', async () => {
      const now = storage.clock.now();
      await events.upsertByUrl(storage.db, 'u1', 'https://y/1', columns('first', now, null));
      await events.upsertByUrl(storage.db, 'u1-again', 'https://y/1', columns('renamed', now, null));
      const row = await events.byUrl(storage.db, 'https://y/1');
      assert.deepEqual([row?.id, row?.title, Number(row?.start_at)], ['u1', 'renamed', now]);
      await events.insert(storage.db, {
        id: 'p1',
        platform_url: 'https://here/events/p1',
        ...columns('p', now, null, 'proposal'),
      });
      assert.ok((await events.urlsOf(storage.db, 'feed')).includes('https://y/1'));
      assert.deepEqual(await events.urlsOf(storage.db, 'proposal'), ['https://here/events/p1']);
      await events.removeByUrl(storage.db, 'https://y/1');
      assert.equal(await events.byUrl(storage.db, 'https://y/1'), undefined);
    });

    test('the refresh stamp: none, then the last one written', async () => {
      assert.equal(await events.refreshedAt(storage.db), null);
      await events.markRefreshed(storage.db, 1000);
      await events.markRefreshed(storage.db, 2000);
      assert.equal(await events.refreshedAt(storage.db), 2000);
    });

    test('event requests: written, paged by creation time, decided once', async () => {
      const ada = await storage.member('Ada');
      const request = (id: string, at: number): EventRequestsTable => ({
        id,
        member_id: ada,
        token_id: null,
        details: '{}',
        title: `t ${id}`,
        start_at: at + HOUR,
        status: 'pending',
        created_at: at,
        decided_at: null,
        decided_by: null,
        reason: null,
        event_id: null,
      });
      const now = storage.clock.now();
      for (let i = 0; i < 3; i++) await eventRequests.insert(storage.db, request(`evr_${i}`, now + i));
      const newest = await eventRequests.page(storage.db, 'pending', { limit: 2 }, 'desc');
      assert.deepEqual(
        newest.rows.map((row) => row.id),
        ['evr_2', 'evr_1'],
      );
      const rest = await eventRequests.page(
        storage.db,
        undefined,
        { limit: 2, after: newest.next ?? undefined },
        'desc',
      );
      assert.deepEqual(
        rest.rows.map((row) => row.id),
        ['evr_0'],
      );
      const decision = {
        status: 'approved',
        decided_at: now + 9,
        decided_by: 'op',
        reason: null,
        event_id: 'evt_evr_1',
      };
      assert.equal(await eventRequests.decide(storage.db, 'evr_1', decision), true);
      assert.equal(
        await eventRequests.decide(storage.db, 'evr_1', { ...decision, status: 'declined' }),
        false,
      );
      assert.deepEqual(await eventRequests.operatorView(storage.db, 'evr_1'), {
        id: 'evr_1',
        member_id: ada,
        title: 't evr_1',
        status: 'approved',
        reason: null,
        event_id: 'evt_evr_1',
      });
      assert.equal((await eventRequests.byId(storage.db, 'evr_0'))?.status, 'pending');
      assert.equal(await eventRequests.byId(storage.db, 'nope'), undefined);
    });

    test('RSVPs: the latest live one in the window; a failed one does not count', async () => {
      const bo = await storage.member('Bo');
      const now = storage.clock.now();
      const rsvp = (id: string, at: number, status = 'queued'): RsvpsTable => ({
        id,
        event_url: 'https://x/1',
        member_id: bo,
        token_id: null,
        email: null,
        name: null,
        status,
        created_at: at,
        attempts: 0,
        next_attempt_at: at,
        locked_until: null,
        settled_at: null,
        last_error: null,
      });
      await rsvps.insert(storage.db, rsvp('r_old', now - 10 * HOUR));
      await rsvps.insert(storage.db, rsvp('r_new', now - HOUR));
      await rsvps.insert(storage.db, rsvp('r_failed', now, 'failed'));
      assert.equal(await rsvps.latestLive(storage.db, bo, 'https://x/1', now - 20 * HOUR), 'r_new');
      assert.equal(await rsvps.latestLive(storage.db, bo, 'https://x/1', now - HOUR), undefined);
      assert.equal(await rsvps.latestLive(storage.db, bo, 'https://x/2', 0), undefined);
      assert.equal((await rsvps.get(storage.db, 'r_old')).status, 'queued');
      await assert.rejects(rsvps.get(storage.db, 'nope'));
    });
  });
}
