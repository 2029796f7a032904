import { sql, type Transaction } from 'kysely';
import type { Schema } from '../../storage/schema.ts';
import { transact, type WritePort } from '../../storage/transactions.ts';
import type { Clocked, OnDatabase } from '../ports.ts';
import type { ContentSet, IssueDoc } from './folder.ts';

export interface KindReport {
  added: number;
  updated: number;
  unchanged: number;
  removed: number;
}

export type ImportReport = Partial<Record<'issues' | 'presentations' | 'news' | 'pages', KindReport>>;

type Trx = Transaction<Schema>;

/**
 * Stores one kind so that it mirrors the folder: new files are added, changed files (by hash)
 * replace their rows, files that disappeared are removed. Unchanged rows keep their `updated_at`,
 * which is what the feeds report as the entry's update time.
 */
async function mirror<Doc extends { hash: string }>(
  existing: { key: string; source_hash: string }[],
  docs: Doc[],
  keyOf: (doc: Doc) => string,
  write: (doc: Doc, isNew: boolean) => Promise<void>,
  remove: (key: string) => Promise<void>,
): Promise<KindReport> {
  const report: KindReport = { added: 0, updated: 0, unchanged: 0, removed: 0 };
  const hashes = new Map(existing.map((row) => [row.key, row.source_hash]));
  for (const doc of docs) {
    const hash = hashes.get(keyOf(doc));
    if (hash === doc.hash) report.unchanged += 1;
    else {
      await write(doc, hash === undefined);
      report[hash === undefined ? 'added' : 'updated'] += 1;
    }
  }
  const kept = new Set(docs.map(keyOf));
  for (const key of hashes.keys()) {
    if (kept.has(key)) continue;
    await remove(key);
    report.removed += 1;
  }
  return report;
}

async function removeStories(deps: OnDatabase, trx: Trx, slug: string): Promise<void> {
  await trx.deleteFrom('newsletter_stories').where('issue_slug', '=', slug).execute();
  if (deps.database.engine === 'sqlite')
    await sql`delete from newsletter_fts where issue_slug = ${slug}`.execute(trx);
}

async function writeIssue(deps: OnDatabase, trx: Trx, issue: IssueDoc, isNew: boolean, now: number) {
  const values = {
    title: issue.title,
    date: issue.date,
    summary: issue.summary,
    intro: issue.intro,
    source_hash: issue.hash,
    updated_at: now,
  };
  if (isNew)
    await trx
      .insertInto('newsletter_issues')
      .values({ slug: issue.slug, ...values })
      .execute();
  else {
    await trx.updateTable('newsletter_issues').set(values).where('slug', '=', issue.slug).execute();
    await removeStories(deps, trx, issue.slug);
  }
  for (const [position, story] of issue.stories.entries()) {
    await trx
      .insertInto('newsletter_stories')
      .values({ issue_slug: issue.slug, story_id: story.id, position, title: story.title, body: story.body })
      .execute();
    if (deps.database.engine === 'sqlite')
      await sql`insert into newsletter_fts (issue_slug, story_id, title, body) values (${issue.slug}, ${story.id}, ${story.title}, ${story.body})`.execute(
        trx,
      );
  }
}

/** Stores a checked content folder in one transaction: a failed import leaves the old content whole. */
export async function importContent(
  deps: Clocked & OnDatabase & WritePort,
  set: ContentSet,
): Promise<ImportReport> {
  const now = deps.clock.now();
  const report: ImportReport = {};
  await transact(deps, async (trx) => {
    if (set.issues) {
      const existing = await trx
        .selectFrom('newsletter_issues')
        .select(['slug as key', 'source_hash'])
        .execute();
      report.issues = await mirror(
        existing,
        set.issues,
        (doc) => doc.slug,
        (doc, isNew) => writeIssue(deps, trx, doc, isNew, now),
        async (slug) => {
          await removeStories(deps, trx, slug);
          await trx.deleteFrom('newsletter_issues').where('slug', '=', slug).execute();
        },
      );
    }
    if (set.presentations) {
      const existing = await trx.selectFrom('presentations').select(['number', 'source_hash']).execute();
      report.presentations = await mirror(
        existing.map((row) => ({ key: String(row.number), source_hash: row.source_hash })),
        set.presentations,
        (doc) => String(doc.number),
        async ({ hash, ...doc }) => {
          const values = { ...doc, source_hash: hash, updated_at: now };
          await trx
            .insertInto('presentations')
            .values(values)
            .onConflict((oc) => oc.column('number').doUpdateSet(values))
            .execute();
        },
        async (key) =>
          void (await trx.deleteFrom('presentations').where('number', '=', Number(key)).execute()),
      );
    }
    if (set.news) {
      const existing = await trx.selectFrom('news_links').select(['id as key', 'source_hash']).execute();
      report.news = await mirror(
        existing,
        set.news,
        (doc) => doc.id,
        async ({ hash, ...doc }) => {
          const values = { ...doc, source_hash: hash, updated_at: now };
          await trx
            .insertInto('news_links')
            .values(values)
            .onConflict((oc) => oc.column('id').doUpdateSet(values))
            .execute();
        },
        async (id) => void (await trx.deleteFrom('news_links').where('id', '=', id).execute()),
      );
    }
    if (set.pages) {
      const existing = await trx.selectFrom('content_pages').select(['name as key', 'source_hash']).execute();
      report.pages = await mirror(
        existing,
        set.pages,
        (doc) => doc.name,
        async (doc) => {
          const values = {
            fields: JSON.stringify(doc.fields),
            body: doc.body,
            source_hash: doc.hash,
            updated_at: now,
          };
          await trx
            .insertInto('content_pages')
            .values({ name: doc.name, ...values })
            .onConflict((oc) => oc.column('name').doUpdateSet(values))
            .execute();
        },
        async (name) => void (await trx.deleteFrom('content_pages').where('name', '=', name).execute()),
      );
    }
  });
  return report;
}
