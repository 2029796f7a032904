import type { Executor, IdempotencyTable } from './schema.ts';

// Idempotency keys' claims and the answers kept for replay (table idempotency). A claim is
// `in_flight` while its request runs, `applied` once its effect committed, `done` with its answer.

export const idempotency = {
  /** Claims a key as in flight; false (nothing written) where it is already held. */
  async claim(
    executor: Executor,
    claim: { keyHash: string; fingerprint: string; now: number; expiresAt: number },
  ): Promise<boolean> {
    const inserted = await executor
      .insertInto('idempotency')
      .values({
        key_hash: claim.keyHash,
        fingerprint: claim.fingerprint,
        state: 'in_flight',
        status: null,
        headers: null,
        body: null,
        created_at: claim.now,
        expires_at: claim.expiresAt,
      })
      .onConflict((oc) => oc.column('key_hash').doNothing())
      .executeTakeFirst();
    return Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1;
  },

  find(executor: Executor, keyHash: string): Promise<IdempotencyTable | undefined> {
    return executor.selectFrom('idempotency').selectAll().where('key_hash', '=', keyHash).executeTakeFirst();
  },

  /** Removes the claim made at `createdAt` (not one another request made since). */
  async removeClaimMadeAt(executor: Executor, keyHash: string, createdAt: number): Promise<void> {
    await executor
      .deleteFrom('idempotency')
      .where('key_hash', '=', keyHash)
      .where('created_at', '=', createdAt)
      .execute();
  },

  /** An in-flight claim marked applied (its effect committed). */
  async markApplied(executor: Executor, keyHash: string): Promise<void> {
    await executor
      .updateTable('idempotency')
      .set({ state: 'applied' })
      .where('key_hash', '=', keyHash)
      .where('state', '=', 'in_flight')
      .execute();
  },

  /** The answer kept for replay: the claim is done. */
  async complete(
    executor: Executor,
    keyHash: string,
    answer: { status: number; headers: string; body: string },
  ): Promise<void> {
    await executor
      .updateTable('idempotency')
      .set({ state: 'done', status: answer.status, headers: answer.headers, body: answer.body })
      .where('key_hash', '=', keyHash)
      .execute();
  },

  /** Removes a claim: any (`inFlightOnly` false), or only one still in flight. */
  async release(executor: Executor, keyHash: string, inFlightOnly: boolean): Promise<void> {
    let release = executor.deleteFrom('idempotency').where('key_hash', '=', keyHash);
    if (inFlightOnly) release = release.where('state', '=', 'in_flight');
    await release.execute();
  },
};
