import { type Page, type PageRequest, pageOf } from './paging.ts';
import type { Executor, MembersTable } from './schema.ts';

// The community's members (table members): who signs in, their handle and tier.

export const members = {
  byId(executor: Executor, id: string): Promise<MembersTable | undefined> {
    return executor.selectFrom('members').selectAll().where('id', '=', id).executeTakeFirst();
  },

  /** The member with this address; the caller normalizes it (domain/members/email-address.ts). */
  byEmail(executor: Executor, email: string): Promise<MembersTable | undefined> {
    return executor.selectFrom('members').selectAll().where('email', '=', email).executeTakeFirst();
  },

  /** What an operator's tier decision shows of the member it changed. */
  tierView(executor: Executor, id: string) {
    return executor
      .selectFrom('members')
      .select(['id', 'name', 'tier'])
      .where('id', '=', id)
      .executeTakeFirst();
  },

  /** The names and tiers of these members (none asked: none), in no particular order. */
  labels(executor: Executor, ids: readonly string[]): Promise<Pick<MembersTable, 'id' | 'name' | 'tier'>[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return executor.selectFrom('members').select(['id', 'name', 'tier']).where('id', 'in', ids).execute();
  },

  /** What an invitation shows of the member it added (by the normalized address). */
  invitationView(executor: Executor, email: string) {
    return executor
      .selectFrom('members')
      .select(['id', 'name', 'email', 'tier'])
      .where('email', '=', email)
      .executeTakeFirst();
  },

  /** What the directory's full-text entry holds of a member; throws when there is none. */
  nameAndHandle(executor: Executor, id: string): Promise<Pick<MembersTable, 'name' | 'handle'>> {
    return executor
      .selectFrom('members')
      .select(['name', 'handle'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
  },

  /** The ids of the members holding one of these tiers (none asked: none). */
  async idsWithTier(executor: Executor, tiers: readonly string[]): Promise<string[]> {
    if (tiers.length === 0) return [];
    const rows = await executor.selectFrom('members').select('id').where('tier', 'in', tiers).execute();
    return rows.map((row) => row.id);
  },

  /** One page of the members, oldest first (ties by id): a range of the index (created_at, id). */
  page(executor: Executor, page: PageRequest): Promise<Page<MembersTable>> {
    return pageOf(
      executor.selectFrom('members').selectAll(),
      { time: 'created_at', id: 'id', direction: 'asc' },
      page,
    );
  },

  async add(executor: Executor, member: MembersTable): Promise<void> {
    await executor.insertInto('members').values(member).execute();
  },

  /** Sets a member's tier; false when there is no such member. */
  async setTier(executor: Executor, id: string, tier: string, now: number): Promise<boolean> {
    const result = await executor
      .updateTable('members')
      .set({ tier, updated_at: now })
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  },
};
