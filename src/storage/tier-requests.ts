import { type Page, type PageRequest, pageOf } from './paging.ts';
import type { Executor, TierRequestsTable } from './schema.ts';

// Members' requests for another tier and operators' answers to them (table tier_requests); an
// operator's direct tier change is a row too (status changed), so it shows in the member's history.

/** What an operator's answer writes on the request it decides. */
export type TierDecisionColumns = Pick<
  TierRequestsTable,
  'status' | 'decided_at' | 'decided_by' | 'granted_tier' | 'reason'
>;

export const tierRequests = {
  async add(executor: Executor, request: TierRequestsTable): Promise<void> {
    await executor.insertInto('tier_requests').values(request).execute();
  },

  byId(executor: Executor, id: string): Promise<TierRequestsTable | undefined> {
    return executor.selectFrom('tier_requests').selectAll().where('id', '=', id).executeTakeFirst();
  },

  /** A member's requests, newest first (ties by id, newest id first). */
  ofMember(executor: Executor, memberId: string): Promise<TierRequestsTable[]> {
    return executor
      .selectFrom('tier_requests')
      .selectAll()
      .where('member_id', '=', memberId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
  },

  /** One page of the requests of one status, oldest first. */
  page(executor: Executor, status: string, page: PageRequest): Promise<Page<TierRequestsTable>> {
    return pageOf(
      executor.selectFrom('tier_requests').selectAll().where('status', '=', status),
      { time: 'created_at', id: 'id', direction: 'asc' },
      page,
    );
  },

  /**
   * Ends the member's pending request, if any, with `status` (superseded, cancelled) at `now`:
   * whether there was one.
   */
  async endPending(executor: Executor, memberId: string, status: string, now: number): Promise<boolean> {
    const result = await executor
      .updateTable('tier_requests')
      .set({ status, decided_at: now })
      .where('member_id', '=', memberId)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  },

  /** Writes an answer on a request still pending: whether it was. */
  async decidePending(executor: Executor, id: string, decision: TierDecisionColumns): Promise<boolean> {
    const result = await executor
      .updateTable('tier_requests')
      .set(decision)
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) !== 0;
  },

  /** What an operator's decision shows of the request it answered, with the member's tier now. */
  decisionView(executor: Executor, id: string) {
    return executor
      .selectFrom('tier_requests')
      .innerJoin('members', 'members.id', 'tier_requests.member_id')
      .select([
        'tier_requests.id',
        'tier_requests.member_id',
        'tier_requests.tier',
        'tier_requests.status',
        'tier_requests.granted_tier',
        'tier_requests.reason',
        'members.tier as member_tier',
      ])
      .where('tier_requests.id', '=', id)
      .executeTakeFirst();
  },
};
