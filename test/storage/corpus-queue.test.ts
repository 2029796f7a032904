// The corpus queue repository's contract: the same calls give the same rows on both engines.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { corpusQueue } from '../../src/storage/corpus-queue.ts';
import { engines } from '../support/databases.ts';
import { storageUnderTest } from '../support/storage.ts';

for (const engine of engines) {
  describe(`corpus queue repository (${engine.name})`, { skip: engine.skip }, () => {
    const storage = storageUnderTest(engine.name);
    const item = (id: string, createdAt: number) => ({
      id,
      url: `https://example.org/${id}.pdf`,
      source: 'paper',
      note: null,
      created_at: createdAt,
    });

    test('an added item is pending, listed oldest first', async () => {
      await corpusQueue.add(storage.db, item('cq_b', 20));
      await corpusQueue.add(storage.db, item('cq_a', 10));
      await corpusQueue.add(storage.db, item('cq_c', 30));
      const pending = await corpusQueue.withStatus(storage.db, 'pending');
      assert.deepEqual(
        pending.map((row) => row.id),
        ['cq_a', 'cq_b', 'cq_c'],
      );
      assert.deepEqual(await corpusQueue.pending(storage.db, 'cq_a'), {
        ...item('cq_a', 10),
        status: 'pending',
        decided_at: null,
        document_id: null,
      });
    });

    test('an ingested item keeps its document and is no longer pending', async () => {
      await corpusQueue.markIngested(storage.db, 'cq_a', 'doc_1', 40);
      assert.equal(await corpusQueue.pending(storage.db, 'cq_a'), undefined);
      const [ingested] = await corpusQueue.withStatus(storage.db, 'ingested');
      assert.equal(ingested.document_id, 'doc_1');
      assert.equal(ingested.decided_at, 40);
    });

    test('reject decides a pending item once; not one already decided or unknown', async () => {
      assert.equal(await corpusQueue.reject(storage.db, 'cq_b', 50), true);
      assert.equal(await corpusQueue.reject(storage.db, 'cq_b', 60), false);
      assert.equal(await corpusQueue.reject(storage.db, 'cq_a', 60), false);
      assert.equal(await corpusQueue.reject(storage.db, 'cq_none', 60), false);
      const rejected = await corpusQueue.withStatus(storage.db, 'rejected');
      assert.deepEqual(
        rejected.map((row) => [row.id, row.decided_at]),
        [['cq_b', 50]],
      );
    });
  });
}
