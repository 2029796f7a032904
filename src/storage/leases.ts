import { sql } from 'kysely';
import type { Executor } from './schema.ts';

// Leases kept as a row of `settings` (key → the time the holder's lease ends), so that one
// instance at a time runs a scheduled job on either engine. The holder is known by its end time.

/**
 * Takes the lease `key` until `until` if the last holder's ended by `now`: one conditional update,
 * which only one instance can win.
 */
export async function takeLease(
  executor: Executor,
  key: string,
  now: number,
  until: number,
): Promise<boolean> {
  await executor
    .insertInto('settings')
    .values({ key, value: '0' })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  const taken = await executor
    .updateTable('settings')
    .set({ value: String(until) })
    .where('key', '=', key)
    .where(sql<number>`cast(value as bigint)`, '<=', now)
    .executeTakeFirst();
  return Number(taken.numUpdatedRows) === 1;
}

/** Moves the holder's lease from `held` to `until`; false when it is no longer held (it ran out). */
export async function renewLease(
  executor: Executor,
  key: string,
  held: number,
  until: number,
): Promise<boolean> {
  const renewed = await executor
    .updateTable('settings')
    .set({ value: String(until) })
    .where('key', '=', key)
    .where('value', '=', String(held))
    .executeTakeFirst();
  return Number(renewed.numUpdatedRows) === 1;
}

/** Ends the holder's lease at once, so the next run need not wait for it to run out. */
export async function releaseLease(executor: Executor, key: string, held: number): Promise<void> {
  await executor
    .updateTable('settings')
    .set({ value: '0' })
    .where('key', '=', key)
    .where('value', '=', String(held))
    .execute();
}
