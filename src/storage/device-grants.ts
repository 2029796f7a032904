import type { DeviceGrantsTable, Executor } from './schema.ts';

// Device authorization grants (table device_grants, RFC 8628): only the SHA-256 of the device and
// user codes is stored. The requester's address and software (ip, user_agent) are kept only while a
// grant is pending: every write that takes a grant out of pending drops them in the same statement.

const REQUESTER_DROPPED = { ip: null, user_agent: null } as const;

/** What a decision writes on the grant. */
export interface GrantDecision {
  status: string;
  memberId: string;
  grantedScopes: string;
  deniedScopes: string;
  decidedAt: number;
  reason: string | null;
}

export const deviceGrants = {
  async insert(executor: Executor, row: DeviceGrantsTable): Promise<void> {
    await executor.insertInto('device_grants').values(row).execute();
  },

  /** Deletes the grant with this user code if it expired before `now` (its code may be reused). */
  async deleteExpiredWithUserCode(executor: Executor, userCodeHash: string, now: number): Promise<void> {
    await executor
      .deleteFrom('device_grants')
      .where('user_code_hash', '=', userCodeHash)
      .where('expires_at', '<', now)
      .execute();
  },

  byDeviceCode(executor: Executor, deviceCodeHash: string): Promise<DeviceGrantsTable | undefined> {
    return executor
      .selectFrom('device_grants')
      .selectAll()
      .where('device_code_hash', '=', deviceCodeHash)
      .executeTakeFirst();
  },

  byUserCode(executor: Executor, userCodeHash: string): Promise<DeviceGrantsTable | undefined> {
    return executor
      .selectFrom('device_grants')
      .selectAll()
      .where('user_code_hash', '=', userCodeHash)
      .executeTakeFirst();
  },

  /**
   * Moves the grant from status `from` to `to`, dropping the requester's address and software;
   * false when it was not in `from` (another request moved it first).
   */
  async end(executor: Executor, id: string, from: string, to: string): Promise<boolean> {
    const ended = await executor
      .updateTable('device_grants')
      .set({ status: to, ...REQUESTER_DROPPED })
      .where('id', '=', id)
      .where('status', '=', from)
      .executeTakeFirst();
    return Number(ended.numUpdatedRows) > 0;
  },

  /** Moves every grant still `from` whose code expired by `now` to `to`; how many it moved. */
  async endExpired(executor: Executor, from: string, to: string, now: number): Promise<number> {
    const ended = await executor
      .updateTable('device_grants')
      .set({ status: to, ...REQUESTER_DROPPED })
      .where('status', '=', from)
      .where('expires_at', '<=', now)
      .executeTakeFirst();
    return Number(ended.numUpdatedRows);
  },

  async setInterval(executor: Executor, id: string, intervalS: number): Promise<void> {
    await executor.updateTable('device_grants').set({ interval_s: intervalS }).where('id', '=', id).execute();
  },

  async setLastPoll(executor: Executor, id: string, now: number): Promise<void> {
    await executor.updateTable('device_grants').set({ last_poll_at: now }).where('id', '=', id).execute();
  },

  async setToken(executor: Executor, id: string, tokenId: string): Promise<void> {
    await executor.updateTable('device_grants').set({ token_id: tokenId }).where('id', '=', id).execute();
  },

  /**
   * Binds the grant to the session `sessionHash` unless it is bound already; answers the session it
   * is bound to after that.
   */
  async bindSession(executor: Executor, id: string, sessionHash: string): Promise<string | null> {
    await executor
      .updateTable('device_grants')
      .set({ bound_session_hash: sessionHash })
      .where('id', '=', id)
      .where('bound_session_hash', 'is', null)
      .execute();
    const bound = await executor
      .selectFrom('device_grants')
      .select('bound_session_hash')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    return bound.bound_session_hash;
  },

  /**
   * Writes the decision on the grant if it is still `from`, dropping the requester's address and
   * software; false when it was not (decided already).
   */
  async decide(executor: Executor, id: string, from: string, decision: GrantDecision): Promise<boolean> {
    const updated = await executor
      .updateTable('device_grants')
      .set({
        status: decision.status,
        member_id: decision.memberId,
        granted_scopes: decision.grantedScopes,
        denied_scopes: decision.deniedScopes,
        decided_at: decision.decidedAt,
        reason: decision.reason,
        ...REQUESTER_DROPPED,
      })
      .where('id', '=', id)
      .where('status', '=', from)
      .executeTakeFirst();
    return Number(updated.numUpdatedRows) > 0;
  },
};
