import type { Executor, OAuthAuthorizationsTable } from './schema.ts';

// OAuth authorization requests (table oauth_authorizations): pending, then decided, then their code
// exchanged. Only the SHA-256 of the request's secret and of the code is stored.

/** What a decision writes on the request. */
export interface AuthorizationDecision {
  status: string;
  memberId: string;
  grantedScopes: string;
  sandbox: boolean;
  decidedAt: number;
  codeHash: string | null;
  codeExpiresAt: number | null;
}

export const oauthAuthorizations = {
  async insert(executor: Executor, row: OAuthAuthorizationsTable): Promise<void> {
    await executor.insertInto('oauth_authorizations').values(row).execute();
  },

  /** Deletes the requests that expired before `before`. */
  async deleteExpiredBefore(executor: Executor, before: number): Promise<void> {
    await executor.deleteFrom('oauth_authorizations').where('expires_at', '<', before).execute();
  },

  byRequestHash(executor: Executor, requestHash: string): Promise<OAuthAuthorizationsTable | undefined> {
    return executor
      .selectFrom('oauth_authorizations')
      .selectAll()
      .where('request_hash', '=', requestHash)
      .executeTakeFirst();
  },

  byCodeHash(executor: Executor, codeHash: string): Promise<OAuthAuthorizationsTable | undefined> {
    return executor
      .selectFrom('oauth_authorizations')
      .selectAll()
      .where('code_hash', '=', codeHash)
      .executeTakeFirst();
  },

  /**
   * Binds the request to the session `sessionHash` unless it is bound already; answers the session
   * it is bound to after that.
   */
  async bindSession(executor: Executor, id: string, sessionHash: string): Promise<string | null> {
    await executor
      .updateTable('oauth_authorizations')
      .set({ bound_session_hash: sessionHash })
      .where('id', '=', id)
      .where('bound_session_hash', 'is', null)
      .execute();
    const bound = await executor
      .selectFrom('oauth_authorizations')
      .select('bound_session_hash')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    return bound.bound_session_hash;
  },

  /** Writes the decision on the request if it is still `from`; false when it was not. */
  async decide(
    executor: Executor,
    id: string,
    from: string,
    decision: AuthorizationDecision,
  ): Promise<boolean> {
    const updated = await executor
      .updateTable('oauth_authorizations')
      .set({
        status: decision.status,
        member_id: decision.memberId,
        granted_scopes: decision.grantedScopes,
        sandbox: decision.sandbox ? 1 : 0,
        decided_at: decision.decidedAt,
        code_hash: decision.codeHash,
        code_expires_at: decision.codeExpiresAt,
      })
      .where('id', '=', id)
      .where('status', '=', from)
      .executeTakeFirst();
    return Number(updated.numUpdatedRows) > 0;
  },

  /** Records the exchange of the request's code if it is still `from`; false when it was not. */
  async markExchanged(
    executor: Executor,
    id: string,
    from: string,
    to: string,
    now: number,
  ): Promise<boolean> {
    const claimed = await executor
      .updateTable('oauth_authorizations')
      .set({ status: to, exchanged_at: now })
      .where('id', '=', id)
      .where('status', '=', from)
      .executeTakeFirst();
    return Number(claimed.numUpdatedRows) > 0;
  },

  async setToken(executor: Executor, id: string, tokenId: string): Promise<void> {
    await executor
      .updateTable('oauth_authorizations')
      .set({ token_id: tokenId })
      .where('id', '=', id)
      .execute();
  },
};
