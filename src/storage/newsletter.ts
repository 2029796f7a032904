import { sql } from 'kysely';
import { onPostgres } from './engine/prepared.ts';
import type { Executor, NewsletterIssuesTable, NewsletterStoriesTable } from './schema.ts';

// The newsletter the operator publishes from the content folder: its issues and their stories
// (tables newsletter_issues and newsletter_stories), and the stories' full-text index (the embedded
// engine's newsletter_fts; on PostgreSQL an expression over the stories themselves).

/** An issue's columns but its slug. */
export type IssueColumns = Omit<NewsletterIssuesTable, 'slug'>;

/** A story as an issue holds it. */
export type StoryColumns = Pick<NewsletterStoriesTable, 'story_id' | 'title' | 'body'>;

export const newsletter = {
  /** The newest issues with their story counts, by date then slug, newest first. */
  async summaries(executor: Executor, limit: number) {
    const rows = await executor
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
  },

  issue(executor: Executor, slug: string): Promise<NewsletterIssuesTable | undefined> {
    return executor.selectFrom('newsletter_issues').selectAll().where('slug', '=', slug).executeTakeFirst();
  },

  /** The newest issues' rows, by date then slug, newest first. */
  recent(executor: Executor, limit: number): Promise<NewsletterIssuesTable[]> {
    return executor
      .selectFrom('newsletter_issues')
      .selectAll()
      .orderBy('date', 'desc')
      .orderBy('slug', 'desc')
      .limit(limit)
      .execute();
  },

  /** An issue's stories in their order. */
  storiesOf(executor: Executor, slug: string) {
    return executor
      .selectFrom('newsletter_stories')
      .select(['story_id as id', 'title', 'body'])
      .where('issue_slug', '=', slug)
      .orderBy('position')
      .execute();
  },

  /**
   * The stories holding every word as a prefix, best match first (bm25 on the embedded engine;
   * ts_rank on PostgreSQL, ties by issue slug, newest first, then position). The words are letters
   * and digits only: the caller drops everything else.
   */
  async matching(
    executor: Executor,
    words: readonly string[],
    limit: number,
  ): Promise<{ issue_slug: string; story_id: string }[]> {
    if (!onPostgres(executor)) {
      const match = words.map((w) => `"${w}"*`).join(' ');
      return (
        await sql<{
          issue_slug: string;
          story_id: string;
        }>`select issue_slug, story_id from newsletter_fts where newsletter_fts match ${match} order by bm25(newsletter_fts) limit ${limit}`.execute(
          executor,
        )
      ).rows;
    }
    const tsquery = words.map((w) => `${w}:*`).join(' & ');
    return (
      await sql<{
        issue_slug: string;
        story_id: string;
      }>`select issue_slug, story_id from newsletter_stories where to_tsvector('simple', title || ' ' || body) @@ to_tsquery('simple', ${tsquery}) order by ts_rank(to_tsvector('simple', title || ' ' || body), to_tsquery('simple', ${tsquery})) desc, issue_slug desc, position limit ${limit}`.execute(
        executor,
      )
    ).rows;
  },

  /** Every story of these issues, with its issue's title and date (in no particular order). */
  storiesWithIssues(executor: Executor, slugs: readonly string[]) {
    return executor
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
      .where('newsletter_stories.issue_slug', 'in', slugs)
      .execute();
  },

  /** Each stored issue's slug (as key) and the hash of the file it came from. */
  hashes(executor: Executor): Promise<{ key: string; source_hash: string }[]> {
    return executor.selectFrom('newsletter_issues').select(['slug as key', 'source_hash']).execute();
  },

  async insertIssue(executor: Executor, slug: string, columns: IssueColumns): Promise<void> {
    await executor
      .insertInto('newsletter_issues')
      .values({ slug, ...columns })
      .execute();
  },

  async updateIssue(executor: Executor, slug: string, columns: IssueColumns): Promise<void> {
    await executor.updateTable('newsletter_issues').set(columns).where('slug', '=', slug).execute();
  },

  async removeIssue(executor: Executor, slug: string): Promise<void> {
    await executor.deleteFrom('newsletter_issues').where('slug', '=', slug).execute();
  },

  /** Removes an issue's stories and their index entries. */
  async removeStories(executor: Executor, slug: string): Promise<void> {
    await executor.deleteFrom('newsletter_stories').where('issue_slug', '=', slug).execute();
    if (!onPostgres(executor))
      await sql`delete from newsletter_fts where issue_slug = ${slug}`.execute(executor);
  },

  /** Adds a story to an issue at `position`, with its index entry. */
  async addStory(executor: Executor, slug: string, position: number, story: StoryColumns): Promise<void> {
    await executor
      .insertInto('newsletter_stories')
      .values({ issue_slug: slug, story_id: story.story_id, position, title: story.title, body: story.body })
      .execute();
    if (!onPostgres(executor))
      await sql`insert into newsletter_fts (issue_slug, story_id, title, body) values (${slug}, ${story.story_id}, ${story.title}, ${story.body})`.execute(
        executor,
      );
  },
};
