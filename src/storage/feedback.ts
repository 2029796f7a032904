import { type Page, type PageRequest, pageOf } from './paging.ts';
import type { Executor, FeedbackTable } from './schema.ts';

// Tickets agents and members file about the service, and their triage (table feedback).

export const feedback = {
  async insert(executor: Executor, ticket: FeedbackTable): Promise<void> {
    await executor.insertInto('feedback').values(ticket).execute();
  },

  /** One page of the tickets of one status, by creation time. */
  page(
    executor: Executor,
    status: string,
    page: PageRequest,
    direction: 'asc' | 'desc',
  ): Promise<Page<FeedbackTable>> {
    return pageOf(
      executor.selectFrom('feedback').selectAll().where('status', '=', status),
      { time: 'created_at', id: 'ticket_id', direction },
      page,
    );
  },

  /** Resolves a ticket still open: whether it was. */
  async resolveOpen(executor: Executor, ticketId: string): Promise<boolean> {
    const updated = await executor
      .updateTable('feedback')
      .set({ status: 'resolved' })
      .where('ticket_id', '=', ticketId)
      .where('status', '=', 'open')
      .executeTakeFirst();
    return Number(updated.numUpdatedRows) === 1;
  },

  async exists(executor: Executor, ticketId: string): Promise<boolean> {
    const row = await executor
      .selectFrom('feedback')
      .select('ticket_id')
      .where('ticket_id', '=', ticketId)
      .executeTakeFirst();
    return row !== undefined;
  },

  /** The operator's view of one ticket after triage. */
  operatorView(
    executor: Executor,
    ticketId: string,
  ): Promise<Pick<FeedbackTable, 'ticket_id' | 'status' | 'category' | 'priority'> | undefined> {
    return executor
      .selectFrom('feedback')
      .select(['ticket_id', 'status', 'category', 'priority'])
      .where('ticket_id', '=', ticketId)
      .executeTakeFirst();
  },
};
