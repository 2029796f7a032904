// The feedback repository's contract: the same calls give the same rows on both engines.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { feedback } from '../../src/storage/feedback.ts';
import type { FeedbackTable } from '../../src/storage/schema.ts';
import { engines } from '../support/databases.ts';
import { storageUnderTest } from '../support/storage.ts';

for (const engine of engines) {
  describe(`feedback repository (${engine.name})`, { skip: engine.skip }, () => {
    const storage = storageUnderTest(engine.name);
    const ticket = (id: string, at: number, status = 'open'): FeedbackTable => ({
      ticket_id: id,
      member_id: null,
      token_id: null,
      category: 'bug',
      category_text: null,
      priority: 'normal',
      message: `m ${id}`,
      url: null,
      expected: null,
      got: null,
      agent_id: null,
      contact: null,
      ip_hash: 'h',
      warnings: '[]',
      status,
      created_at: at,
    });

    test('tickets are written and paged by creation time within a status', async () => {
      for (let i = 0; i < 3; i++) await feedback.insert(storage.db, ticket(`fb_${i}`, 1000 + i));
      await feedback.insert(storage.db, ticket('fb_done', 999, 'resolved'));
      const oldest = await feedback.page(storage.db, 'open', { limit: 2 }, 'asc');
      assert.deepEqual(
        oldest.rows.map((row) => row.ticket_id),
        ['fb_0', 'fb_1'],
      );
      const rest = await feedback.page(
        storage.db,
        'open',
        { limit: 2, after: oldest.next ?? undefined },
        'asc',
      );
      assert.deepEqual(
        rest.rows.map((row) => row.ticket_id),
        ['fb_2'],
      );
      assert.equal(rest.next, null);
      assert.equal(
        Number((await feedback.page(storage.db, 'resolved', { limit: 5 }, 'desc')).rows[0].created_at),
        999,
      );
    });

    test('an open ticket resolves once; an unknown one does not exist', async () => {
      await feedback.insert(storage.db, ticket('fb_r', 2000));
      assert.equal(await feedback.resolveOpen(storage.db, 'fb_r'), true);
      assert.equal(await feedback.resolveOpen(storage.db, 'fb_r'), false);
      assert.equal(await feedback.exists(storage.db, 'fb_r'), true);
      assert.equal(await feedback.exists(storage.db, 'fb_none'), false);
      assert.deepEqual(await feedback.operatorView(storage.db, 'fb_r'), {
        ticket_id: 'fb_r',
        status: 'resolved',
        category: 'bug',
        priority: 'normal',
      });
    });
  });
}
