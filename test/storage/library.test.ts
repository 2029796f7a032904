// The library repository's contract: the same presentations, news links and pages on both engines.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { library } from '../../src/storage/library.ts';
import { engines } from '../support/databases.ts';
import { storageUnderTest } from '../support/storage.ts';

for (const engine of engines) {
  describe(`library repository (${engine.name})`, { skip: engine.skip }, () => {
    const storage = storageUnderTest(engine.name);
    const talk = (number: number, title: string) => ({
      number,
      title,
      date: '2024-03-01',
      speaker: 'Ada',
      summary: null,
      slides_url: null,
      video_url: 'https://video.example.org/1',
      notes: 'notes',
      source_hash: `h-${title}`,
      updated_at: 10,
    });
    const link = (id: string, date: string) => ({
      id,
      title: `Link ${id}`,
      url: `https://news.example.org/${id}`,
      date,
      note: 'note',
      source_hash: `h-${id}`,
      updated_at: 10,
    });

    test('presentations: saved, replaced by number, listed highest first, removed', async () => {
      await library.savePresentation(storage.db, talk(1, 'First'));
      await library.savePresentation(storage.db, talk(3, 'Third'));
      await library.savePresentation(storage.db, talk(2, 'Second'));
      await library.savePresentation(storage.db, talk(1, 'First, again'));
      assert.deepEqual(await library.presentations(storage.db, 2), [
        { number: 3, title: 'Third', date: '2024-03-01', speaker: 'Ada', summary: null },
        { number: 2, title: 'Second', date: '2024-03-01', speaker: 'Ada', summary: null },
      ]);
      assert.deepEqual(await library.presentation(storage.db, 1), {
        number: 1,
        title: 'First, again',
        date: '2024-03-01',
        speaker: 'Ada',
        summary: null,
        slides_url: null,
        video_url: 'https://video.example.org/1',
        notes: 'notes',
      });
      assert.deepEqual(
        (await library.presentationHashes(storage.db))
          .map((row) => [Number(row.number), row.source_hash])
          .sort(),
        [
          [1, 'h-First, again'],
          [2, 'h-Second'],
          [3, 'h-Third'],
        ],
      );
      await library.removePresentation(storage.db, 2);
      assert.equal(await library.presentation(storage.db, 2), undefined);
    });

    test('news links: newest first, ties by id; replaced by id, removed', async () => {
      await library.saveNews(storage.db, link('b', '2024-02-01'));
      await library.saveNews(storage.db, link('a', '2024-02-01'));
      await library.saveNews(storage.db, link('c', '2024-01-01'));
      await library.saveNews(storage.db, { ...link('c', '2024-03-01'), title: 'Moved' });
      assert.deepEqual(
        (await library.news(storage.db, 10)).map((row) => [row.id, row.title]),
        [
          ['c', 'Moved'],
          ['a', 'Link a'],
          ['b', 'Link b'],
        ],
      );
      assert.deepEqual(Object.keys((await library.news(storage.db, 1))[0]), [
        'id',
        'title',
        'url',
        'date',
        'note',
      ]);
      await library.removeNews(storage.db, 'a');
      assert.deepEqual((await library.newsHashes(storage.db)).map((row) => row.key).sort(), ['b', 'c']);
    });

    test('pages: saved, replaced by name, read, removed', async () => {
      await library.savePage(storage.db, 'donate', {
        fields: '{}',
        body: 'one',
        source_hash: 'h1',
        updated_at: 1,
      });
      await library.savePage(storage.db, 'donate', {
        fields: '{"title":"Give"}',
        body: 'two',
        source_hash: 'h2',
        updated_at: 2,
      });
      assert.deepEqual(await library.page(storage.db, 'donate'), { fields: '{"title":"Give"}', body: 'two' });
      assert.deepEqual(await library.pageHashes(storage.db), [{ key: 'donate', source_hash: 'h2' }]);
      await library.removePage(storage.db, 'donate');
      assert.equal(await library.page(storage.db, 'donate'), undefined);
    });
  });
}
