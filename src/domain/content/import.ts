import { library } from '../../storage/library.ts';
import { newsletter } from '../../storage/newsletter.ts';
import type { Executor } from '../../storage/schema.ts';
import { transact, type WritePort } from '../../storage/transactions.ts';
import type { Clocked } from '../ports.ts';
import type { ContentSet, IssueDoc } from './folder.ts';

export interface KindReport {
  added: number;
  updated: number;
  unchanged: number;
  removed: number;
}

export type ImportReport = Partial<Record<'issues' | 'presentations' | 'news' | 'pages', KindReport>>;

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

async function writeIssue(trx: Executor, issue: IssueDoc, isNew: boolean, now: number) {
  const values = {
    title: issue.title,
    date: issue.date,
    summary: issue.summary,
    intro: issue.intro,
    source_hash: issue.hash,
    updated_at: now,
  };
  if (isNew) await newsletter.insertIssue(trx, issue.slug, values);
  else {
    await newsletter.updateIssue(trx, issue.slug, values);
    await newsletter.removeStories(trx, issue.slug);
  }
  for (const [position, story] of issue.stories.entries())
    await newsletter.addStory(trx, issue.slug, position, {
      story_id: story.id,
      title: story.title,
      body: story.body,
    });
}

/** Stores a checked content folder in one transaction: a failed import leaves the old content whole. */
export async function importContent(deps: Clocked & WritePort, set: ContentSet): Promise<ImportReport> {
  const now = deps.clock.now();
  const report: ImportReport = {};
  await transact(deps, async (trx) => {
    if (set.issues) {
      report.issues = await mirror(
        await newsletter.hashes(trx),
        set.issues,
        (doc) => doc.slug,
        (doc, isNew) => writeIssue(trx, doc, isNew, now),
        async (slug) => {
          await newsletter.removeStories(trx, slug);
          await newsletter.removeIssue(trx, slug);
        },
      );
    }
    if (set.presentations) {
      const existing = await library.presentationHashes(trx);
      report.presentations = await mirror(
        existing.map((row) => ({ key: String(row.number), source_hash: row.source_hash })),
        set.presentations,
        (doc) => String(doc.number),
        async ({ hash, ...doc }) => {
          await library.savePresentation(trx, { ...doc, source_hash: hash, updated_at: now });
        },
        (key) => library.removePresentation(trx, Number(key)),
      );
    }
    if (set.news) {
      report.news = await mirror(
        await library.newsHashes(trx),
        set.news,
        (doc) => doc.id,
        async ({ hash, ...doc }) => {
          await library.saveNews(trx, { ...doc, source_hash: hash, updated_at: now });
        },
        (id) => library.removeNews(trx, id),
      );
    }
    if (set.pages) {
      report.pages = await mirror(
        await library.pageHashes(trx),
        set.pages,
        (doc) => doc.name,
        (doc) =>
          library.savePage(trx, doc.name, {
            fields: JSON.stringify(doc.fields),
            body: doc.body,
            source_hash: doc.hash,
            updated_at: now,
          }),
        (name) => library.removePage(trx, name),
      );
    }
  });
  return report;
}
