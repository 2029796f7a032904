// The newsletter repository's contract: the same issues, stories and searches on both engines.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { newsletter } from '../../src/storage/newsletter.ts';
import { engines } from '../support/databases.ts';
import { storageUnderTest } from '../support/storage.ts';

for (const engine of engines) {
  describe(`newsletter repository (${engine.name})`, { skip: engine.skip }, () => {
    const storage = storageUnderTest(engine.name);
    const issue = (title: string, date: string) => ({
      title,
      date,
      summary: `summary of ${title}`,
      intro: 'intro',
      source_hash: `h-${title}`,
      updated_at: 1000,
    });
    const story = (id: string, title: string, body: string) => ({ story_id: id, title, body });

    test('issues with their stories: listed newest first with counts, read whole, hashed', async () => {
      await storage.db.transaction().execute(async (trx) => {
        await newsletter.insertIssue(trx, '2024-01', issue('January', '2024-01-05'));
        await newsletter.addStory(trx, '2024-01', 1, story('b', 'Printer', 'The printer works again'));
        await newsletter.addStory(trx, '2024-01', 0, story('a', 'Welcome', 'Welcome to the hackspace'));
        await newsletter.insertIssue(trx, '2024-02', issue('February', '2024-02-05'));
        await newsletter.insertIssue(trx, '2024-02b', issue('February again', '2024-02-05'));
      });
      const summaries = await newsletter.summaries(storage.db, 10);
      assert.deepEqual(
        summaries.map((row) => [row.slug, row.story_count]),
        [
          ['2024-02b', 0],
          ['2024-02', 0],
          ['2024-01', 2],
        ],
      );
      assert.deepEqual(summaries[2], {
        slug: '2024-01',
        title: 'January',
        date: '2024-01-05',
        summary: 'summary of January',
        story_count: 2,
      });
      assert.equal((await newsletter.summaries(storage.db, 1)).length, 1);
      assert.deepEqual(
        (await newsletter.recent(storage.db, 2)).map((row) => row.slug),
        ['2024-02b', '2024-02'],
      );
      const january = await newsletter.issue(storage.db, '2024-01');
      assert.deepEqual(
        { ...january, updated_at: Number(january?.updated_at) },
        { slug: '2024-01', ...issue('January', '2024-01-05') },
      );
      assert.equal(await newsletter.issue(storage.db, 'none'), undefined);
      assert.deepEqual(await newsletter.storiesOf(storage.db, '2024-01'), [
        { id: 'a', title: 'Welcome', body: 'Welcome to the hackspace' },
        { id: 'b', title: 'Printer', body: 'The printer works again' },
      ]);
      assert.deepEqual(
        (await newsletter.hashes(storage.db)).sort((x, y) => x.key.localeCompare(y.key)),
        [
          { key: '2024-01', source_hash: 'h-January' },
          { key: '2024-02', source_hash: 'h-February' },
          { key: '2024-02b', source_hash: 'h-February again' },
        ],
      );
    });

    test('matching finds stories by every word as a prefix; the stories come with their issue', async () => {
      assert.deepEqual(await newsletter.matching(storage.db, ['print', 'work'], 10), [
        { issue_slug: '2024-01', story_id: 'b' },
      ]);
      assert.deepEqual(await newsletter.matching(storage.db, ['nothinglikethis'], 10), []);
      const rows = await newsletter.storiesWithIssues(storage.db, ['2024-01']);
      assert.deepEqual(rows.map((row) => [row.story_id, row.issue_title, row.date]).sort(), [
        ['a', 'January', '2024-01-05'],
        ['b', 'January', '2024-01-05'],
      ]);
    });

    test('an issue updated and its stories replaced; removed stories leave the index', async () => {
      await storage.db.transaction().execute(async (trx) => {
        await newsletter.updateIssue(trx, '2024-01', issue('January, revised', '2024-01-06'));
        await newsletter.removeStories(trx, '2024-01');
        await newsletter.addStory(trx, '2024-01', 0, story('c', 'Soldering', 'Soldering class on Friday'));
      });
      assert.equal((await newsletter.issue(storage.db, '2024-01'))?.title, 'January, revised');
      assert.deepEqual(await newsletter.matching(storage.db, ['printer'], 10), []);
      assert.deepEqual(await newsletter.matching(storage.db, ['solder'], 10), [
        { issue_slug: '2024-01', story_id: 'c' },
      ]);
      await newsletter.removeStories(storage.db, '2024-01');
      await newsletter.removeIssue(storage.db, '2024-01');
      assert.equal(await newsletter.issue(storage.db, '2024-01'), undefined);
      assert.deepEqual(await newsletter.matching(storage.db, ['solder'], 10), []);
    });
  });
}
