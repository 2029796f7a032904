import type { ContentPagesTable, Executor, NewsLinksTable, PresentationsTable } from './schema.ts';

// What else the operator publishes from the content folder: the talks given (table presentations),
// links to news (table news_links) and single pages such as the donation page (table content_pages).

const SUMMARY_COLUMNS = ['number', 'title', 'date', 'speaker', 'summary'] as const;

export const library = {
  /** The newest presentations' summaries, highest number first. */
  presentations(executor: Executor, limit: number) {
    return executor
      .selectFrom('presentations')
      .select(SUMMARY_COLUMNS)
      .orderBy('number', 'desc')
      .limit(limit)
      .execute();
  },

  /** One presentation, without its source hash and update time. */
  presentation(executor: Executor, number: number) {
    return executor
      .selectFrom('presentations')
      .select([...SUMMARY_COLUMNS, 'slides_url', 'video_url', 'notes'])
      .where('number', '=', number)
      .executeTakeFirst();
  },

  /** The newest news links, by date newest first, then id. */
  news(executor: Executor, limit: number) {
    return executor
      .selectFrom('news_links')
      .select(['id', 'title', 'url', 'date', 'note'])
      .orderBy('date', 'desc')
      .orderBy('id')
      .limit(limit)
      .execute();
  },

  /** A page's front matter (JSON) and body. */
  page(executor: Executor, name: string) {
    return executor
      .selectFrom('content_pages')
      .select(['fields', 'body'])
      .where('name', '=', name)
      .executeTakeFirst();
  },

  /** Each stored presentation's number and the hash of the file it came from. */
  presentationHashes(executor: Executor): Promise<{ number: number; source_hash: string }[]> {
    return executor.selectFrom('presentations').select(['number', 'source_hash']).execute();
  },

  /** Adds a presentation or replaces the one with its number. */
  async savePresentation(executor: Executor, presentation: PresentationsTable): Promise<void> {
    await executor
      .insertInto('presentations')
      .values(presentation)
      .onConflict((oc) => oc.column('number').doUpdateSet(presentation))
      .execute();
  },

  async removePresentation(executor: Executor, number: number): Promise<void> {
    await executor.deleteFrom('presentations').where('number', '=', number).execute();
  },

  /** Each stored news link's id (as key) and the hash of the file it came from. */
  newsHashes(executor: Executor): Promise<{ key: string; source_hash: string }[]> {
    return executor.selectFrom('news_links').select(['id as key', 'source_hash']).execute();
  },

  /** Adds a news link or replaces the one with its id. */
  async saveNews(executor: Executor, link: NewsLinksTable): Promise<void> {
    await executor
      .insertInto('news_links')
      .values(link)
      .onConflict((oc) => oc.column('id').doUpdateSet(link))
      .execute();
  },

  async removeNews(executor: Executor, id: string): Promise<void> {
    await executor.deleteFrom('news_links').where('id', '=', id).execute();
  },

  /** Each stored page's name (as key) and the hash of the file it came from. */
  pageHashes(executor: Executor): Promise<{ key: string; source_hash: string }[]> {
    return executor.selectFrom('content_pages').select(['name as key', 'source_hash']).execute();
  },

  /** Adds a page or replaces the one with its name. */
  async savePage(executor: Executor, name: string, columns: Omit<ContentPagesTable, 'name'>): Promise<void> {
    await executor
      .insertInto('content_pages')
      .values({ name, ...columns })
      .onConflict((oc) => oc.column('name').doUpdateSet(columns))
      .execute();
  },

  async removePage(executor: Executor, name: string): Promise<void> {
    await executor.deleteFrom('content_pages').where('name', '=', name).execute();
  },
};
