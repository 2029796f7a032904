import type { CorpusQueueTable, Executor } from './schema.ts';

// Addresses waiting for an operator to review them before they join the research corpus (table
// corpus_queue). An item is pending until it is ingested or rejected, once.

export const corpusQueue = {
  async add(
    executor: Executor,
    item: Pick<CorpusQueueTable, 'id' | 'url' | 'source' | 'note' | 'created_at'>,
  ) {
    await executor
      .insertInto('corpus_queue')
      .values({ ...item, status: 'pending', decided_at: null, document_id: null })
      .execute();
  },

  /** The items in one state, oldest first. */
  withStatus(executor: Executor, status: string): Promise<CorpusQueueTable[]> {
    return executor
      .selectFrom('corpus_queue')
      .selectAll()
      .where('status', '=', status)
      .orderBy('created_at')
      .execute();
  },

  pending(executor: Executor, id: string): Promise<CorpusQueueTable | undefined> {
    return executor
      .selectFrom('corpus_queue')
      .selectAll()
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .executeTakeFirst();
  },

  async markIngested(executor: Executor, id: string, documentId: string, now: number): Promise<void> {
    await executor
      .updateTable('corpus_queue')
      .set({ status: 'ingested', decided_at: now, document_id: documentId })
      .where('id', '=', id)
      .execute();
  },

  /** Rejects a pending item; false when there is no pending item with this id. */
  async reject(executor: Executor, id: string, now: number): Promise<boolean> {
    const result = await executor
      .updateTable('corpus_queue')
      .set({ status: 'rejected', decided_at: now })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  },
};
