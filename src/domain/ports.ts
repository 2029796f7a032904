import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Database } from '../storage/database.ts';
import type { Executor } from '../storage/schema.ts';

/**
 * The narrow ports a domain function names as its parameter type, composed with `&`
 * (`deps: Store & Clocked & WritePort`): the function says what it touches, and the composition
 * root's whole `Deps` still fits structurally. A domain service declares its port beside itself
 * (`Tiered` in access/tiers.ts); the write batcher's is `WritePort` in storage/transactions.ts.
 */

/**
 * Reads, and writes that need no transaction. An executor, not only the database: a caller inside a
 * transaction passes its `trx`, so the function reads what the transaction already wrote. Transactions
 * are opened through `transact` only, never from here.
 */
export interface Store {
  db: Executor;
}

export interface Clocked {
  clock: Clock;
}

/** The settings a function reads, by name: `Configured<'limits' | 'publicUrl'>`. */
export interface Configured<K extends keyof Config> {
  config: Pick<Config, K>;
}

/**
 * The database handle itself, for what is kept per database rather than queried: the key of this
 * instance's brief reuses (storage/brief-reuse.ts), the reconciliation's waker, the first-run lock.
 * A query written per engine (full-text search) is its repository's business, never the domain's.
 */
export interface OnDatabase {
  database: Database;
}
