import type { Executor, SignInLinksTable } from './schema.ts';

// Single-use sign-in links (table sign_in_links): only the SHA-256 of a link's secret is stored,
// with the address it signs in, its end, when it was spent, and the SHA-256 of the asking browser's
// cookie.

export const signInLinks = {
  async insert(executor: Executor, row: SignInLinksTable): Promise<void> {
    await executor.insertInto('sign_in_links').values(row).execute();
  },

  /**
   * Spends the unspent link with this hash that is still good at `now`, in one conditional update
   * (so only one of concurrent spends wins); its address, or undefined when none was spent.
   */
  async spend(executor: Executor, hash: string, now: number): Promise<string | undefined> {
    const spent = await executor
      .updateTable('sign_in_links')
      .set({ used_at: now })
      .where('id_hash', '=', hash)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .returning('email')
      .executeTakeFirst();
    return spent?.email;
  },

  /**
   * As `spend`, only when the link was asked for by the browser whose cookie hashes to `browserHash`.
   */
  async spendInBrowser(
    executor: Executor,
    hash: string,
    browserHash: string,
    now: number,
  ): Promise<string | undefined> {
    const spent = await executor
      .updateTable('sign_in_links')
      .set({ used_at: now })
      .where('id_hash', '=', hash)
      .where('browser_hash', '=', browserHash)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .returning('email')
      .executeTakeFirst();
    return spent?.email;
  },

  /** Whether the link with this hash, spent or not, was asked for by the browser of `browserHash`. */
  async askedFrom(executor: Executor, hash: string, browserHash: string): Promise<boolean> {
    const row = await executor
      .selectFrom('sign_in_links')
      .select('id_hash')
      .where('id_hash', '=', hash)
      .where('browser_hash', '=', browserHash)
      .executeTakeFirst();
    return row !== undefined;
  },

  /**
   * Whether the spent link with this hash, still within its time at `now`, belongs to the member of
   * the session with `sessionHash`, opened at or after the link was spent.
   */
  async spentIntoSession(
    executor: Executor,
    hash: string,
    sessionHash: string,
    now: number,
  ): Promise<boolean> {
    const row = await executor
      .selectFrom('sign_in_links')
      .innerJoin('members', 'members.email', 'sign_in_links.email')
      .innerJoin('sessions', 'sessions.member_id', 'members.id')
      .select('sessions.id_hash')
      .where('sign_in_links.id_hash', '=', hash)
      .where('sign_in_links.used_at', 'is not', null)
      .where('sign_in_links.expires_at', '>', now)
      .where('sessions.id_hash', '=', sessionHash)
      .whereRef('sessions.created_at', '>=', 'sign_in_links.used_at')
      .executeTakeFirst();
    return row !== undefined;
  },
};
