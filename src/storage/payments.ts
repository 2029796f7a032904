import type { Insertable } from 'kysely';
import type { DonationsTable, Executor, PaymentSettlementsTable } from './schema.ts';

// x402 payments: each payment's settlement claim (table payment_settlements: settling, then
// recorded or failed, leased while a settle call may run) and the donations recorded from them
// (table donations).

export const settlements = {
  /** Writes a new claim; false (nothing written) where the payment is already claimed. */
  async claim(executor: Executor, claim: PaymentSettlementsTable): Promise<boolean> {
    const result = await executor
      .insertInto('payment_settlements')
      .values(claim)
      .onConflict((oc) => oc.column('payment_key').doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  },

  stateOf(
    executor: Executor,
    key: string,
  ): Promise<Pick<PaymentSettlementsTable, 'state' | 'outcome'> | undefined> {
    return executor
      .selectFrom('payment_settlements')
      .select(['state', 'outcome'])
      .where('payment_key', '=', key)
      .executeTakeFirst();
  },

  /** Removes a claim still settling. */
  async removeSettling(executor: Executor, key: string): Promise<void> {
    await executor
      .deleteFrom('payment_settlements')
      .where('payment_key', '=', key)
      .where('state', '=', 'settling')
      .execute();
  },

  async markRecorded(executor: Executor, key: string, outcome: string, now: number): Promise<void> {
    await executor
      .updateTable('payment_settlements')
      .set({ state: 'recorded', outcome, updated_at: now })
      .where('payment_key', '=', key)
      .execute();
  },

  /** Marks a claim still settling as failed. */
  async markFailed(executor: Executor, key: string, outcome: string, now: number): Promise<void> {
    await executor
      .updateTable('payment_settlements')
      .set({ state: 'failed', outcome, updated_at: now })
      .where('payment_key', '=', key)
      .where('state', '=', 'settling')
      .execute();
  },

  /** Up to `limit` settling claims whose lease ended by `now`, oldest first. */
  expired(
    executor: Executor,
    now: number,
    limit: number,
  ): Promise<Pick<PaymentSettlementsTable, 'payment_key' | 'lease_until'>[]> {
    return executor
      .selectFrom('payment_settlements')
      .select(['payment_key', 'lease_until'])
      .where('state', '=', 'settling')
      .where('lease_until', '<=', now)
      .orderBy('created_at')
      .limit(limit)
      .execute();
  },

  /**
   * Renews the lease of a settling claim that still holds `leaseUntil`, counting an attempt, in the
   * statement that checks it: whether this caller took it over.
   */
  async takeOver(
    executor: Executor,
    key: string,
    leaseUntil: number,
    newLease: number,
    now: number,
  ): Promise<boolean> {
    const taken = await executor
      .updateTable('payment_settlements')
      .set((eb) => ({ lease_until: newLease, attempts: eb('attempts', '+', 1), updated_at: now }))
      .where('payment_key', '=', key)
      .where('state', '=', 'settling')
      .where('lease_until', '=', leaseUntil)
      .executeTakeFirst();
    return Number(taken.numUpdatedRows) === 1;
  },

  /** A claim known to be there: Kysely's NoResultError if it is not. */
  get(executor: Executor, key: string): Promise<PaymentSettlementsTable> {
    return executor
      .selectFrom('payment_settlements')
      .selectAll()
      .where('payment_key', '=', key)
      .executeTakeFirstOrThrow();
  },

  /** How many claims are settling, and the soonest lease end among them (null with none). */
  async settling(executor: Executor): Promise<{ count: number; next: number | null }> {
    const row = await executor
      .selectFrom('payment_settlements')
      .select((eb) => [eb.fn.countAll<number>().as('count'), eb.fn.min<number>('lease_until').as('next')])
      .where('state', '=', 'settling')
      .executeTakeFirstOrThrow();
    return { count: Number(row.count), next: row.next === null ? null : Number(row.next) };
  },
};

export const donations = {
  async insert(executor: Executor, donation: Insertable<DonationsTable>): Promise<void> {
    await executor.insertInto('donations').values(donation).execute();
  },

  /** The donation recorded from a payment, if any. */
  fromPayment(
    executor: Executor,
    key: string,
  ): Promise<{ id: string; created_at: number; transaction_ref?: string | null } | undefined> {
    return executor
      .selectFrom('donations')
      .select(['id', 'created_at', 'transaction_ref'])
      .where('payment_key', '=', key)
      .executeTakeFirst();
  },

  /** Every donation's total in cents, and how many distinct donor names gave. */
  async totals(executor: Executor): Promise<{ cents: number; donors: number }> {
    const totals = await executor
      .selectFrom('donations')
      .select((eb) => [
        eb.fn.coalesce(eb.fn.sum<number>('amount_cents'), eb.lit(0)).as('cents'),
        eb.fn.count<number>('donor_name').distinct().as('donors'),
      ])
      .executeTakeFirstOrThrow();
    return { cents: Number(totals.cents), donors: Number(totals.donors) };
  },

  /** The latest public donations, newest first. */
  recentPublic(
    executor: Executor,
    limit: number,
  ): Promise<Pick<DonationsTable, 'donor_name' | 'amount_cents' | 'message' | 'created_at'>[]> {
    return executor
      .selectFrom('donations')
      .select(['donor_name', 'amount_cents', 'message', 'created_at'])
      .where('public', '=', 1)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
  },
};
