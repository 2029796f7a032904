import { type Insertable, sql } from 'kysely';
import type { CorpusDocumentsTable, CorpusPassagesTable, Executor } from './schema.ts';

// The research corpus: its documents and their passages (tables corpus_documents and
// corpus_passages), and the generation every change bumps (a row of settings), which tells each
// instance's in-memory index that it is stale.

/** The settings key of the corpus generation. */
export const GENERATION_KEY = 'corpus_generation';

/** A document's columns but its id. */
export type DocumentColumns = Omit<CorpusDocumentsTable, 'id'>;

export const corpus = {
  /** What an unchanged re-add needs to know of a stored document. */
  stamp(
    executor: Executor,
    id: string,
  ): Promise<Pick<CorpusDocumentsTable, 'content_hash' | 'title' | 'passage_count'> | undefined> {
    return executor
      .selectFrom('corpus_documents')
      .select(['content_hash', 'title', 'passage_count'])
      .where('id', '=', id)
      .executeTakeFirst();
  },

  /** A stored document's revision, or undefined when there is none. */
  async revisionOf(executor: Executor, id: string): Promise<number | undefined> {
    const row = await executor
      .selectFrom('corpus_documents')
      .select('revision')
      .where('id', '=', id)
      .executeTakeFirst();
    return row ? Number(row.revision) : undefined;
  },

  async insertDocument(executor: Executor, id: string, columns: DocumentColumns): Promise<void> {
    await executor
      .insertInto('corpus_documents')
      .values({ id, ...columns })
      .execute();
  },

  async updateDocument(executor: Executor, id: string, columns: DocumentColumns): Promise<void> {
    await executor.updateTable('corpus_documents').set(columns).where('id', '=', id).execute();
  },

  /** Writes passages in one statement (the caller keeps each batch within the engines' bounds). */
  async insertPassages(executor: Executor, passages: Insertable<CorpusPassagesTable>[]): Promise<void> {
    await executor.insertInto('corpus_passages').values(passages).execute();
  },

  async removePassagesOf(executor: Executor, documentId: string): Promise<void> {
    await executor.deleteFrom('corpus_passages').where('document_id', '=', documentId).execute();
  },

  async removeDocument(executor: Executor, id: string): Promise<void> {
    await executor.deleteFrom('corpus_documents').where('id', '=', id).execute();
  },

  /** The id of the document with this id, or added from this path or URL. */
  async idOf(executor: Executor, idOrOrigin: string): Promise<string | undefined> {
    const row = await executor
      .selectFrom('corpus_documents')
      .select('id')
      .where((eb) => eb.or([eb('id', '=', idOrOrigin), eb('origin', '=', idOrOrigin)]))
      .executeTakeFirst();
    return row?.id;
  },

  /** Every document's whole row, in no particular order. */
  everyDocument(executor: Executor): Promise<CorpusDocumentsTable[]> {
    return executor.selectFrom('corpus_documents').selectAll().execute();
  },

  /** A document's passages, in their order. */
  passagesOf(executor: Executor, documentId: string) {
    return executor
      .selectFrom('corpus_passages')
      .selectAll()
      .where('document_id', '=', documentId)
      .orderBy('position')
      .execute();
  },

  /** Every document's listing, by source then title. */
  documents(executor: Executor) {
    return executor
      .selectFrom('corpus_documents')
      .select(['id', 'source', 'title', 'authors', 'year', 'url', 'origin', 'passage_count', 'added_at'])
      .orderBy('source')
      .orderBy('title')
      .execute();
  },

  /** Every document's revision bumped, so each instance copies them afresh. */
  async bumpEveryRevision(executor: Executor): Promise<void> {
    await executor.updateTable('corpus_documents').set({ revision: sql`revision + 1` }).execute();
  },

  async countPassages(executor: Executor): Promise<number> {
    const row = await executor
      .selectFrom('corpus_passages')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  async bumpGeneration(executor: Executor): Promise<void> {
    await executor
      .insertInto('settings')
      .values({ key: GENERATION_KEY, value: '1' })
      .onConflict((oc) =>
        oc.column('key').doUpdateSet({ value: sql`cast(cast(settings.value as integer) + 1 as text)` }),
      )
      .execute();
  },

  /** The generation, '0' before the first change. */
  async generation(executor: Executor): Promise<string> {
    const row = await executor
      .selectFrom('settings')
      .select('value')
      .where('key', '=', GENERATION_KEY)
      .executeTakeFirst();
    return row?.value ?? '0';
  },
};
