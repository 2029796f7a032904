import type { Executor, OidcLoginsTable } from './schema.ts';

// OpenID Connect logins between the redirect to the provider and its callback (table oidc_logins):
// only hashes of the state and of the browser's secret, the page to return to, and an end.

export const oidcLogins = {
  async insert(executor: Executor, row: OidcLoginsTable): Promise<void> {
    await executor.insertInto('oidc_logins').values(row).execute();
  },

  /** Deletes the logins that ended by `now`. */
  async deleteEnded(executor: Executor, now: number): Promise<void> {
    await executor.deleteFrom('oidc_logins').where('expires_at', '<=', now).execute();
  },

  /**
   * Spends the unspent login with this state and browser, still good at `now`, in one conditional
   * update (only one of concurrent spends wins); its page to return to, or undefined.
   */
  async spend(
    executor: Executor,
    stateHash: string,
    browserHash: string,
    now: number,
  ): Promise<string | undefined> {
    const spent = await executor
      .updateTable('oidc_logins')
      .set({ used_at: now })
      .where('state_hash', '=', stateHash)
      .where('browser_hash', '=', browserHash)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .returning('next_path')
      .executeTakeFirst();
    return spent?.next_path;
  },
};
