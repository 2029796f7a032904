import type { Transaction } from 'kysely';
import type { Executor, Schema } from './schema.ts';

/** Runs fn in the caller's transaction when there is one, else in a new one: a change and its log rows commit together. */
export function inTransaction<T>(
  executor: Executor,
  fn: (trx: Transaction<Schema>) => Promise<T>,
): Promise<T> {
  if (executor.isTransaction) return fn(executor as Transaction<Schema>);
  return executor.transaction().execute(fn);
}
