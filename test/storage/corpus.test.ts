// The corpus repository's contract: the same calls give the same rows on both engines.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { corpus, type DocumentColumns } from '../../src/storage/corpus.ts';
import { engines } from '../support/databases.ts';
import { storageUnderTest } from '../support/storage.ts';

for (const engine of engines) {
  describe(`corpus repository (${engine.name})`, { skip: engine.skip }, () => {
    const storage = storageUnderTest(engine.name);
    const columns = (title: string, revision = 1): DocumentColumns => ({
      source: 'rfc',
      title,
      authors: '',
      year: null,
      url: null,
      body: '',
      origin: `/docs/${title}`,
      content_hash: `h-${title}`,
      passage_count: 2,
      revision,
      added_at: 1000,
    });
    const passage = (documentId: string, position: number) => ({
      document_id: documentId,
      position,
      source: 'rfc',
      title: 't',
      section: 's',
      body: `passage ${position}`,
    });

    test('the generation starts at 0 and counts every bump', async () => {
      assert.equal(await corpus.generation(storage.db), '0');
      await corpus.bumpGeneration(storage.db);
      await corpus.bumpGeneration(storage.db);
      assert.equal(await corpus.generation(storage.db), '2');
    });

    test('documents and passages: written, found by id or origin, replaced, removed', async () => {
      await corpus.insertDocument(storage.db, 'doc_b', columns('b'));
      await corpus.insertDocument(storage.db, 'doc_a', columns('a'));
      await corpus.insertPassages(storage.db, [
        passage('doc_a', 0),
        passage('doc_a', 1),
        passage('doc_b', 0),
      ]);
      assert.deepEqual(await corpus.stamp(storage.db, 'doc_a'), {
        content_hash: 'h-a',
        title: 'a',
        passage_count: 2,
      });
      assert.equal(await corpus.revisionOf(storage.db, 'doc_a'), 1);
      assert.equal(await corpus.revisionOf(storage.db, 'none'), undefined);
      assert.equal(await corpus.idOf(storage.db, '/docs/b'), 'doc_b');
      assert.equal(await corpus.idOf(storage.db, 'doc_b'), 'doc_b');
      assert.deepEqual(
        (await corpus.documents(storage.db)).map((doc) => doc.title),
        ['a', 'b'],
      );
      assert.equal(await corpus.countPassages(storage.db), 3);
      await corpus.updateDocument(storage.db, 'doc_a', columns('a2', 2));
      await corpus.bumpEveryRevision(storage.db);
      assert.equal(await corpus.revisionOf(storage.db, 'doc_a'), 3);
      await corpus.removePassagesOf(storage.db, 'doc_a');
      await corpus.removeDocument(storage.db, 'doc_a');
      assert.equal(await corpus.countPassages(storage.db), 1);
      assert.equal(await corpus.idOf(storage.db, 'doc_a'), undefined);
    });

    test("every document whole, and one document's passages in their order", async () => {
      await corpus.insertDocument(storage.db, 'doc_c', columns('c'));
      await corpus.insertPassages(storage.db, [passage('doc_c', 1), passage('doc_c', 0)]);
      const every = await corpus.everyDocument(storage.db);
      assert.deepEqual(every.map((doc) => doc.id).sort(), ['doc_b', 'doc_c']);
      const c = every.find((doc) => doc.id === 'doc_c');
      assert.deepEqual(
        { ...c, revision: Number(c?.revision), added_at: Number(c?.added_at) },
        {
          id: 'doc_c',
          ...columns('c'),
        },
      );
      const passages = await corpus.passagesOf(storage.db, 'doc_c');
      assert.deepEqual(
        passages.map((p) => [p.position, p.body]),
        [
          [0, 'passage 0'],
          [1, 'passage 1'],
        ],
      );
      assert.deepEqual(await corpus.passagesOf(storage.db, 'none'), []);
    });
  });
}
