// The SQLite side of the research corpus: the local copy a PostgreSQL instance keeps, and the embedded
// database's generation and passage stamp. Both are SQLite files by nature, so this suite runs on
// the embedded engine only.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { corpus } from '../../src/storage/corpus.ts';
import { corpusCopy } from '../../src/storage/corpus-copy.ts';
import { storageUnderTest } from '../support/storage.ts';

describe('corpus copy (sqlite)', () => {
  const storage = storageUnderTest('sqlite');
  const dir = mkdtempSync(join(tmpdir(), 'corpus-copy-test-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const doc = (id: string, revision: number) => ({
    id,
    source: 'rfc',
    title: `Title ${id}`,
    authors: 'A. Author',
    year: 2020,
    url: null,
    revision,
  });
  const passage = (id: number, documentId: string, position: number) => ({
    id,
    document_id: documentId,
    position,
    source: 'rfc',
    title: `Title ${documentId}`,
    section: 's',
    body: `passage ${id}`,
  });

  test('a new copy is empty; documents replace what it held of them, and drop with their passages', () => {
    const local = corpusCopy.open(join(dir, 'corpus.db'), false);
    assert.deepEqual(corpusCopy.stamp(local), { passages: 0, maxPassageId: 0 });
    assert.deepEqual(corpusCopy.revisions(local), new Map());
    corpusCopy.replaceDocument(local, doc('doc_a', 1), [passage(7, 'doc_a', 0), passage(9, 'doc_a', 1)]);
    corpusCopy.replaceDocument(local, doc('doc_b', 4), [passage(12, 'doc_b', 0)]);
    assert.deepEqual(corpusCopy.stamp(local), { passages: 3, maxPassageId: 12 });
    corpusCopy.replaceDocument(local, doc('doc_a', 2), [passage(20, 'doc_a', 0)]);
    assert.deepEqual(
      corpusCopy.revisions(local),
      new Map([
        ['doc_a', 2],
        ['doc_b', 4],
      ]),
    );
    assert.deepEqual(corpusCopy.stamp(local), { passages: 2, maxPassageId: 20 });
    corpusCopy.dropDocuments(local, ['doc_b', 'doc_none']);
    assert.deepEqual(corpusCopy.revisions(local), new Map([['doc_a', 2]]));
    assert.deepEqual(corpusCopy.stamp(local), { passages: 1, maxPassageId: 20 });
    local.close();
    // A durable copy opens again with what it held.
    const again = corpusCopy.open(join(dir, 'corpus.db'), true);
    assert.deepEqual(corpusCopy.revisions(again), new Map([['doc_a', 2]]));
    again.close();
  });

  test("the embedded database's generation and stamp read what the corpus repository wrote", async () => {
    const sqlite = storage.database.sqlite;
    assert.ok(sqlite);
    assert.equal(corpusCopy.generation(sqlite), '0');
    await corpus.bumpGeneration(storage.db);
    assert.equal(corpusCopy.generation(sqlite), '1');
    await corpus.insertPassages(storage.db, [
      { document_id: 'doc_x', position: 0, source: 'rfc', title: 't', section: 's', body: 'b' },
    ]);
    const stamp = corpusCopy.stamp(sqlite);
    assert.equal(stamp.passages, 1);
    assert.ok(stamp.maxPassageId >= 1);
  });
});
