import { type Page, type PageRequest, pageOf } from './paging.ts';
import type { EventRequestsTable, Executor } from './schema.ts';

// Members' event proposals and the operators' decisions on them (table event_requests).

export const eventRequests = {
  async insert(executor: Executor, request: EventRequestsTable): Promise<void> {
    await executor.insertInto('event_requests').values(request).execute();
  },

  byId(executor: Executor, id: string): Promise<EventRequestsTable | undefined> {
    return executor.selectFrom('event_requests').selectAll().where('id', '=', id).executeTakeFirst();
  },

  /** One page (of one status, or all) by creation time. */
  page(
    executor: Executor,
    status: string | undefined,
    page: PageRequest,
    direction: 'asc' | 'desc',
  ): Promise<Page<EventRequestsTable>> {
    let query = executor.selectFrom('event_requests').selectAll();
    if (status) query = query.where('status', '=', status);
    return pageOf(query, { time: 'created_at', id: 'id', direction }, page);
  },

  /** Decides a request still pending: whether it was. */
  async decide(
    executor: Executor,
    id: string,
    decision: Pick<EventRequestsTable, 'status' | 'decided_at' | 'decided_by' | 'reason' | 'event_id'>,
  ): Promise<boolean> {
    const result = await executor
      .updateTable('event_requests')
      .set(decision)
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  },

  /** The operator's view of one request after a decision. */
  operatorView(
    executor: Executor,
    id: string,
  ): Promise<
    Pick<EventRequestsTable, 'id' | 'member_id' | 'title' | 'status' | 'reason' | 'event_id'> | undefined
  > {
    return executor
      .selectFrom('event_requests')
      .select(['id', 'member_id', 'title', 'status', 'reason', 'event_id'])
      .where('id', '=', id)
      .executeTakeFirst();
  },

  /** The member who proposed each published event of `eventIds` (approved proposals only). */
  proposersOf(
    executor: Executor,
    eventIds: readonly string[],
  ): Promise<{ event_id: string | null; member_id: string; name: string | null }[]> {
    if (eventIds.length === 0) return Promise.resolve([]);
    return executor
      .selectFrom('event_requests')
      .leftJoin('members', 'members.id', 'event_requests.member_id')
      .select(['event_requests.event_id', 'event_requests.member_id', 'members.name'])
      .where('event_requests.event_id', 'in', [...eventIds])
      .where('event_requests.status', '=', 'approved')
      .execute();
  },
};
