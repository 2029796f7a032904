import type { Executor, OAuthClientsTable } from './schema.ts';

// OAuth clients registered through RFC 7591 (table oauth_clients): public clients, no secret.

export const oauthClients = {
  async insert(executor: Executor, client: OAuthClientsTable): Promise<void> {
    await executor.insertInto('oauth_clients').values(client).execute();
  },

  byId(executor: Executor, clientId: string): Promise<OAuthClientsTable | undefined> {
    return executor
      .selectFrom('oauth_clients')
      .selectAll()
      .where('client_id', '=', clientId)
      .executeTakeFirst();
  },

  /** Deletes the registrations never used that were made before `before`. */
  async deleteUnusedBefore(executor: Executor, before: number): Promise<void> {
    await executor
      .deleteFrom('oauth_clients')
      .where('used_at', 'is', null)
      .where('created_at', '<', before)
      .execute();
  },

  /** Records the client's first use at `now`; a later use leaves the first one. */
  async markUsed(executor: Executor, clientId: string, now: number): Promise<void> {
    await executor
      .updateTable('oauth_clients')
      .set({ used_at: now })
      .where('client_id', '=', clientId)
      .where('used_at', 'is', null)
      .execute();
  },
};
