import { type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import { engineOf } from './0004-member-operations.ts';

/**
 * What the operator publishes from the content folder (`agent-commons content import`): newsletter
 * issues and their stories, presentations, news links and single pages (the donation page). Each
 * row keeps the hash of the file it came from, so a re-import touches only what changed.
 */
export const content: Migration = {
  async up(db: Kysely<any>) {
    const engine = await engineOf(db);
    await db.schema
      .createTable('newsletter_issues')
      .addColumn('slug', 'text', (c) => c.primaryKey())
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('date', 'text', (c) => c.notNull())
      .addColumn('summary', 'text')
      .addColumn('intro', 'text', (c) => c.notNull())
      .addColumn('source_hash', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('newsletter_issues_date').on('newsletter_issues').column('date').execute();
    await db.schema
      .createTable('newsletter_stories')
      .addColumn('issue_slug', 'text', (c) => c.notNull().references('newsletter_issues.slug'))
      .addColumn('story_id', 'text', (c) => c.notNull())
      .addColumn('position', 'integer', (c) => c.notNull())
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('body', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('newsletter_stories_pk', ['issue_slug', 'story_id'])
      .execute();
    if (engine === 'sqlite') {
      // Kept in step by the content import, like the directory's index.
      await sql`create virtual table newsletter_fts using fts5(issue_slug unindexed, story_id unindexed, title, body, tokenize = 'unicode61 remove_diacritics 2')`.execute(
        db,
      );
    } else {
      await sql`create index newsletter_stories_fts on newsletter_stories using gin (to_tsvector('simple', title || ' ' || body))`.execute(
        db,
      );
    }
    await db.schema
      .createTable('presentations')
      .addColumn('number', 'integer', (c) => c.primaryKey())
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('date', 'text', (c) => c.notNull())
      .addColumn('speaker', 'text')
      .addColumn('summary', 'text')
      .addColumn('slides_url', 'text')
      .addColumn('video_url', 'text')
      .addColumn('notes', 'text', (c) => c.notNull())
      .addColumn('source_hash', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('news_links')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('date', 'text', (c) => c.notNull())
      .addColumn('note', 'text', (c) => c.notNull())
      .addColumn('source_hash', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('content_pages')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('fields', 'text', (c) => c.notNull())
      .addColumn('body', 'text', (c) => c.notNull())
      .addColumn('source_hash', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
  },
};
