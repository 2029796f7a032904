// `agent-commons content import <dir>` as operators run it, in a child process against a temp SQLite
// file: what it stored is read back from the database; re-imports update, mirror deletions and
// refuse a folder with a bad file without touching what was there.
import assert from 'node:assert/strict';
import { rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openDatabase } from '../src/storage/database.ts';
import { contentFolder } from './support/content.ts';
import { freshDatabase, type TestDatabase } from './support/databases.ts';
import { killAllChildren, runCli } from './support/processes.ts';

after(killAllChildren);

describe('content import CLI', { concurrency: 1 }, () => {
  let database: TestDatabase;
  let folder: string;
  before(async () => {
    database = await freshDatabase('sqlite');
    folder = contentFolder();
  });
  after(async () => {
    await database?.drop();
    rmSync(folder, { recursive: true, force: true });
  });

  async function importFolder() {
    const result = await runCli(database.url, ['content', 'import', folder]);
    return { ...result, report: result.code === 0 ? JSON.parse(result.stdout) : undefined };
  }
  async function stored() {
    const opened = openDatabase(database.url);
    try {
      const db = opened.db;
      return {
        issues: await db
          .selectFrom('newsletter_issues')
          .select(['slug', 'title', 'updated_at'])
          .orderBy('slug')
          .execute(),
        stories: await db
          .selectFrom('newsletter_stories')
          .select(['issue_slug', 'story_id'])
          .orderBy('issue_slug')
          .orderBy('position')
          .execute(),
        presentations: (
          await db.selectFrom('presentations').select('number').orderBy('number').execute()
        ).map((r) => r.number),
        news: (await db.selectFrom('news_links').select('id').orderBy('id').execute()).map((r) => r.id),
        pages: (await db.selectFrom('content_pages').select('name').execute()).map((r) => r.name),
      };
    } finally {
      await opened.close();
    }
  }
  const none = { added: 0, updated: 0, unchanged: 0, removed: 0 };

  test('a first import stores every kind', async () => {
    const first = await importFolder();
    assert.equal(first.code, 0, first.stderr);
    assert.deepEqual(first.report, {
      issues: { ...none, added: 2 },
      presentations: { ...none, added: 2 },
      news: { ...none, added: 2 },
      pages: { ...none, added: 1 },
    });
    const rows = await stored();
    assert.deepEqual(
      rows.issues.map((r) => r.slug),
      ['2026-06-doors-open', '2026-07-summer-schedule'],
    );
    assert.equal(rows.stories.length, 6);
    assert.deepEqual(rows.presentations, [1, 2]);
    assert.deepEqual(rows.news, ['community-land-trust', 'open-hardware-summit']);
    assert.deepEqual(rows.pages, ['donate']);
  });

  test('a re-import updates changed files only and removes files that are gone', async () => {
    const before = await stored();
    const path = join(folder, 'newsletter/2026-06-doors-open.md');
    writeFileSync(
      path,
      '---\ntitle: Doors open (corrected)\ndate: 2026-06-02\n---\n## Only story\n\nText.\n',
    );
    unlinkSync(join(folder, 'news/community-land-trust.md'));
    const second = await importFolder();
    assert.equal(second.code, 0, second.stderr);
    assert.deepEqual(second.report, {
      issues: { ...none, updated: 1, unchanged: 1 },
      presentations: { ...none, unchanged: 2 },
      news: { ...none, unchanged: 1, removed: 1 },
      pages: { ...none, unchanged: 1 },
    });
    const after = await stored();
    assert.equal(after.issues[0].title, 'Doors open (corrected)');
    assert.deepEqual(
      after.stories.filter((s) => s.issue_slug === '2026-06-doors-open').map((s) => s.story_id),
      ['only-story'],
    );
    assert.equal(
      after.issues[1].updated_at,
      before.issues[1].updated_at,
      'an unchanged issue keeps its time',
    );
    assert.deepEqual(after.news, ['open-hardware-summit']);
  });

  test('a folder with a bad file is refused whole; an absent kind is left alone', async () => {
    const before = await stored();
    writeFileSync(
      join(folder, 'presentations/3.md'),
      '---\ntitle: No date\nslides: javascript:alert(1)\n---\nNotes.\n',
    );
    writeFileSync(
      join(folder, 'news/Bad Name.md'),
      '---\ntitle: x\nurl: https://x.example\ndate: 2026-01-01\n---\n',
    );
    unlinkSync(join(folder, 'newsletter/2026-07-summer-schedule.md'));
    const refused = await importFolder();
    assert.equal(refused.code, 1);
    assert.match(
      refused.stderr,
      /presentations\/3\.md: front matter needs "date"|presentations\/3\.md: only http/,
    );
    assert.match(refused.stderr, /news\/Bad Name\.md: file names are lower-case/);
    assert.deepEqual(await stored(), before, 'nothing changed');

    unlinkSync(join(folder, 'presentations/3.md'));
    unlinkSync(join(folder, 'news/Bad Name.md'));
    rmSync(join(folder, 'presentations'), { recursive: true });
    const partial = await importFolder();
    assert.equal(partial.code, 0, partial.stderr);
    assert.equal(partial.report.presentations, undefined);
    assert.deepEqual(partial.report.issues, { ...none, unchanged: 1, removed: 1 });
    const after = await stored();
    assert.deepEqual(after.presentations, [1, 2], 'no presentations folder: presentations untouched');
    assert.deepEqual(
      after.issues.map((r) => r.slug),
      ['2026-06-doors-open'],
    );
    assert.equal(after.stories.length, 1, 'the removed issue took its stories along');
  });
});
