import type { Executor, VcsLinksTable } from './schema.ts';

// The code-hosting accounts members linked, and whether they opted into the leaderboard (table
// vcs_links; one row per member).

export const vcsLinks = {
  ofMember(executor: Executor, memberId: string): Promise<VcsLinksTable | undefined> {
    return executor.selectFrom('vcs_links').selectAll().where('member_id', '=', memberId).executeTakeFirst();
  },

  /** The member who linked this host account, if any. */
  async holderOf(executor: Executor, hostUserId: string): Promise<string | undefined> {
    const row = await executor
      .selectFrom('vcs_links')
      .select('member_id')
      .where('host_user_id', '=', hostUserId)
      .executeTakeFirst();
    return row?.member_id;
  },

  async insert(executor: Executor, link: VcsLinksTable): Promise<void> {
    await executor.insertInto('vcs_links').values(link).execute();
  },

  async replace(executor: Executor, link: VcsLinksTable): Promise<void> {
    await executor.updateTable('vcs_links').set(link).where('member_id', '=', link.member_id).execute();
  },

  /** Removes the member's link: whether there was one. */
  async remove(executor: Executor, memberId: string): Promise<boolean> {
    const removed = await executor
      .deleteFrom('vcs_links')
      .where('member_id', '=', memberId)
      .executeTakeFirst();
    return Number(removed.numDeletedRows) > 0;
  },

  async setOptIn(executor: Executor, memberId: string, optIn: boolean, now: number): Promise<void> {
    await executor
      .updateTable('vcs_links')
      .set({ opted_in: optIn ? 1 : 0, updated_at: now })
      .where('member_id', '=', memberId)
      .execute();
  },

  /** The members opted in, with their host usernames, by member id. */
  optedIn(executor: Executor): Promise<Pick<VcsLinksTable, 'member_id' | 'username'>[]> {
    return executor
      .selectFrom('vcs_links')
      .select(['member_id', 'username'])
      .where('opted_in', '=', 1)
      .orderBy('member_id')
      .execute();
  },
};
