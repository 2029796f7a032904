import type { Executor, SessionsTable } from './schema.ts';

// Browser sessions (table sessions): only the SHA-256 of the cookie's value is stored, with its
// member, its end and its revocation.

export const sessions = {
  async insert(executor: Executor, row: SessionsTable): Promise<void> {
    await executor.insertInto('sessions').values(row).execute();
  },

  /**
   * The session with this hash joined to its member (expired or revoked as well), or undefined.
   * Read on every signed-in page: the query's promise is returned as it is.
   */
  withMemberByHash(executor: Executor, hash: string) {
    return executor
      .selectFrom('sessions')
      .innerJoin('members', 'members.id', 'sessions.member_id')
      .select([
        'members.id',
        'members.name',
        'members.email',
        'members.tier',
        'sessions.expires_at',
        'sessions.revoked_at',
      ])
      .where('sessions.id_hash', '=', hash)
      .executeTakeFirst();
  },

  async revoke(executor: Executor, hash: string, now: number): Promise<void> {
    await executor.updateTable('sessions').set({ revoked_at: now }).where('id_hash', '=', hash).execute();
  },
};
