import { type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import { SQLITE_PASSAGES_TABLE } from '../corpus-passages.ts';
import { engineOf } from './0004-member-operations.ts';

/**
 * Research retrieval: documents are split into passages, stored on both engines. Each instance ranks
 * them from its own in-memory index (domain/research/passage-index.ts), so no full-text index is
 * kept in the database.
 */
export const research: Migration = {
  async up(db: Kysely<any>) {
    const engine = await engineOf(db);
    await db.schema.alterTable('corpus_documents').addColumn('origin', 'text').execute();
    await db.schema.alterTable('corpus_documents').addColumn('content_hash', 'text').execute();
    await db.schema
      .alterTable('corpus_documents')
      .addColumn('passage_count', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .alterTable('corpus_documents')
      .addColumn('revision', 'bigint', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.createIndex('corpus_documents_origin').on('corpus_documents').column('origin').execute();
    // The demo's two placeholder documents had no passages; the new seed writes real ones.
    await db.deleteFrom('corpus_documents').execute();

    if (engine === 'sqlite') {
      await sql.raw(SQLITE_PASSAGES_TABLE).execute(db);
    } else {
      await sql`create table corpus_passages (id bigserial primary key, document_id text not null, position integer not null, source text not null, title text not null, section text not null, body text not null)`.execute(
        db,
      );
    }
    await db.schema
      .createIndex('corpus_passages_document')
      .on('corpus_passages')
      .columns(['document_id', 'position'])
      .execute();

    await db.schema
      .createTable('corpus_queue')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('note', 'text')
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('decided_at', 'bigint')
      .addColumn('document_id', 'text')
      .execute();
  },
};
