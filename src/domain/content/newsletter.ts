import { newsletter } from '../../storage/newsletter.ts';
import type { NewsletterIssuesTable } from '../../storage/schema.ts';
import type { Store } from '../ports.ts';

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
  return newsletter.summaries(deps.db, limit);
}

async function withStories(deps: Store, row: NewsletterIssuesTable): Promise<Issue> {
  const stories = await newsletter.storiesOf(deps.db, row.slug);
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
  const row = await newsletter.issue(deps.db, slug);
  return row ? withStories(deps, row) : undefined;
}

/** The newest issues in full (the feeds, and the latest issue). */
export async function recentIssues(deps: Store, limit: number): Promise<Issue[]> {
  const rows = await newsletter.recent(deps.db, limit);
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
export async function searchStories(deps: Store, query: string, limit: number): Promise<SearchHit[]> {
  const words = terms(query);
  if (words.length === 0) return [];
  const keys = await newsletter.matching(deps.db, words, limit);
  if (keys.length === 0) return [];
  const rows = await newsletter.storiesWithIssues(deps.db, [...new Set(keys.map((k) => k.issue_slug))]);
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
