import { sql } from 'kysely';
import type { NewsletterIssuesTable } from '../../storage/schema.ts';
import type { OnDatabase, Store } from '../ports.ts';

export interface IssueSummary {
  slug: string;
  title: string;
  date: string;
  summary: string | null;
  story_count: number;
}

export interface Story {
  id: string;
  title: string;
  /** Markdown. */
  body: string;
}

export interface Issue extends Omit<IssueSummary, 'story_count'> {
  /** Markdown before the first story. */
  intro: string;
  stories: Story[];
  updated_at: string;
}

/** Newest first (by date, then slug so equal dates keep one order). */
export async function listIssues(deps: Store, limit: number): Promise<IssueSummary[]> {
  const rows = await deps.db
    .selectFrom('newsletter_issues')
    .leftJoin('newsletter_stories', 'newsletter_stories.issue_slug', 'newsletter_issues.slug')
    .select(({ fn }) => [
      'newsletter_issues.slug',
      'newsletter_issues.title',
      'newsletter_issues.date',
      'newsletter_issues.summary',
      fn.count<number>('newsletter_stories.story_id').as('story_count'),
    ])
    .groupBy([
      'newsletter_issues.slug',
      'newsletter_issues.title',
      'newsletter_issues.date',
      'newsletter_issues.summary',
    ])
    .orderBy('newsletter_issues.date', 'desc')
    .orderBy('newsletter_issues.slug', 'desc')
    .limit(limit)
    .execute();
  return rows.map((row) => ({ ...row, story_count: Number(row.story_count) }));
}

async function withStories(deps: Store, row: NewsletterIssuesTable): Promise<Issue> {
  const stories = await deps.db
    .selectFrom('newsletter_stories')
    .select(['story_id as id', 'title', 'body'])
    .where('issue_slug', '=', row.slug)
    .orderBy('position')
    .execute();
  return {
    slug: row.slug,
    title: row.title,
    date: row.date,
    summary: row.summary,
    intro: row.intro,
    stories,
    updated_at: new Date(Number(row.updated_at)).toISOString(),
  };
}

export async function getIssue(deps: Store, slug: string): Promise<Issue | undefined> {
  const row = await deps.db
    .selectFrom('newsletter_issues')
    .selectAll()
    .where('slug', '=', slug)
    .executeTakeFirst();
  return row ? withStories(deps, row) : undefined;
}

/** The newest issues in full (the feeds, and the latest issue). */
export async function recentIssues(deps: Store, limit: number): Promise<Issue[]> {
  const rows = await deps.db
    .selectFrom('newsletter_issues')
    .selectAll()
    .orderBy('date', 'desc')
    .orderBy('slug', 'desc')
    .limit(limit)
    .execute();
  return Promise.all(rows.map((row) => withStories(deps, row)));
}

export interface SearchHit {
  slug: string;
  story_id: string;
  issue_title: string;
  date: string;
  title: string;
  excerpt: string;
}

/** Words of the query as prefix terms; no query syntax reaches the engine (as in the directory). */
function terms(query: string): string[] {
  return (query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).slice(0, 8);
}

const EXCERPT = 240;

function excerpt(body: string, words: string[]): string {
  const plain = body
    .replace(/[#*_`>[\]()!]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
  const lower = plain.toLowerCase();
  const at = Math.max(0, Math.min(...words.map((w) => lower.indexOf(w)).filter((i) => i >= 0), plain.length));
  const start = at < EXCERPT / 3 ? 0 : at - Math.floor(EXCERPT / 3);
  const text = plain.slice(start, start + EXCERPT);
  return `${start > 0 ? '…' : ''}${text}${start + EXCERPT < plain.length ? '…' : ''}`;
}

/** Full-text search over stories, best match first (bm25 on SQLite, ts_rank on PostgreSQL). */
export async function searchStories(
  deps: Store & OnDatabase,
  query: string,
  limit: number,
): Promise<SearchHit[]> {
  const words = terms(query);
  if (words.length === 0) return [];
  let keys: { issue_slug: string; story_id: string }[];
  if (deps.database.engine === 'sqlite') {
    const match = words.map((w) => `"${w}"*`).join(' ');
    keys = (
      await sql<{
        issue_slug: string;
        story_id: string;
      }>`select issue_slug, story_id from newsletter_fts where newsletter_fts match ${match} order by bm25(newsletter_fts) limit ${limit}`.execute(
        deps.db,
      )
    ).rows;
  } else {
    const tsquery = words.map((w) => `${w}:*`).join(' & ');
    keys = (
      await sql<{
        issue_slug: string;
        story_id: string;
      }>`select issue_slug, story_id from newsletter_stories where to_tsvector('simple', title || ' ' || body) @@ to_tsquery('simple', ${tsquery}) order by ts_rank(to_tsvector('simple', title || ' ' || body), to_tsquery('simple', ${tsquery})) desc, issue_slug desc, position limit ${limit}`.execute(
        deps.db,
      )
    ).rows;
  }
  if (keys.length === 0) return [];
  const rows = await deps.db
    .selectFrom('newsletter_stories')
    .innerJoin('newsletter_issues', 'newsletter_issues.slug', 'newsletter_stories.issue_slug')
    .select([
      'newsletter_stories.issue_slug',
      'newsletter_stories.story_id',
      'newsletter_stories.title',
      'newsletter_stories.body',
      'newsletter_issues.title as issue_title',
      'newsletter_issues.date',
    ])
    .where('newsletter_stories.issue_slug', 'in', [...new Set(keys.map((k) => k.issue_slug))])
    .execute();
  const byKey = new Map(rows.map((row) => [`${row.issue_slug}/${row.story_id}`, row]));
  return keys.flatMap((key) => {
    const row = byKey.get(`${key.issue_slug}/${key.story_id}`);
    if (!row) return [];
    return [
      {
        slug: row.issue_slug,
        story_id: row.story_id,
        issue_title: row.issue_title,
        date: row.date,
        title: row.title,
        excerpt: excerpt(row.body, words),
      },
    ];
  });
}
