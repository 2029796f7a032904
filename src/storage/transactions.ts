import { AsyncLocalStorage } from 'node:async_hooks';
import { sql, type Transaction } from 'kysely';
import { SharedTransactionFailed, type WriteBatcher, type WriteUnit } from './engine/write-batcher.ts';
import type { Schema } from './schema.ts';

/** What a write needs: the batcher that opens transactions (group commit on the embedded engine). */
export interface WritePort {
  writes: WriteBatcher;
}

/** Written once, inside the first transaction a call opens, after that transaction's own work. */
export interface CommitHook {
  run(trx: Transaction<Schema>): Promise<void>;
  /** Set once it ran in a transaction that committed or is still to commit. */
  used: boolean;
  /**
   * The transaction that carried it did not commit (its work or its COMMIT failed): what `run` noted
   * is undone, and the call's next transaction, if any, carries the hook again.
   */
  rolledBack(): void;
}

interface Scope {
  trx?: Transaction<Schema>;
  hook?: CommitHook;
  /** The write batcher's lane of the call's units (the member it acts for). */
  lane?: string;
}

const scope = new AsyncLocalStorage<Scope>();

/**
 * The one way the service writes in a transaction. Inside a transaction already open in this call,
 * the work joins it (so a change and its log rows commit together, and nested work never waits on a
 * second transaction the single embedded writer cannot open); otherwise it runs as a new unit through
 * the write batcher.
 */
export function transact<T>(port: WritePort, work: WriteUnit<T>, pipelined = false): Promise<T> {
  const outer = scope.getStore();
  if (outer?.trx) return work(outer.trx);
  const hook = outer?.hook;
  const lane = outer?.lane;
  let carried = false;
  // What the hook noted is undone when the unit's work is rolled back (to its savepoint in a batch,
  // or with its transaction), or when its transaction does not commit.
  const undo = () => {
    if (!hook || !carried) return;
    carried = false;
    hook.used = false;
    hook.rolledBack();
  };
  const unit = port.writes[pipelined ? 'runPipelined' : 'run'](
    (trx) =>
      scope.run({ trx, hook, lane }, async () => {
        try {
          const value = await work(trx);
          if (hook && !hook.used) {
            hook.used = true;
            carried = true;
            await hook.run(trx);
          }
          return value;
        } catch (error) {
          undo();
          throw error;
        }
      }),
    lane,
  );
  if (!hook) return unit;
  // The unit's work succeeded but its transaction did not commit.
  return unit.catch((error: unknown) => {
    undo();
    throw error;
  });
}

/**
 * One statement answered later (prepareAnsweredLater) as a write unit: on PostgreSQL its BEGIN, the
 * statement, the commit hook's deferred writes and the COMMIT go in one round trip, shared with
 * other such units that wait at the time (WriteBatcher.runPipelined), and its rows are answered once
 * the unit committed. When a shared transaction fails, the unit goes again alone, to get its own
 * outcome. Undefined, with nothing run, inside a transaction already open in this call: the
 * statement would travel with that transaction's later statements, after this caller has to have
 * its rows; the caller then writes as it otherwise would.
 */
export async function transactAnsweredAtCommit<Row>(
  port: WritePort,
  statement: (trx: Transaction<Schema>) => Promise<{ rows: Promise<Row[]> }>,
): Promise<Row[] | undefined> {
  if (scope.getStore()?.trx) return undefined;
  try {
    const { rows } = await transact(port, statement, true);
    return rows;
  } catch (error) {
    if (!(error instanceof SharedTransactionFailed)) throw error;
  }
  const { rows } = await transact(port, statement);
  return rows;
}

/**
 * Runs `call` so that `hook` is written inside the first transaction the call opens through
 * `transact`, and its transactions go in the write batcher's `lane` (see WriteBatcher).
 */
export function withCommitHook<T>(hook: CommitHook, call: () => Promise<T>, lane?: string): Promise<T> {
  return scope.run({ hook, lane }, call);
}

/** Runs `call` with its transactions in the write batcher's `lane` (a call's: see withCommitHook). */
export function inLane<T>(lane: string, call: () => Promise<T>): Promise<T> {
  return scope.run({ lane }, call);
}

/**
 * Runs `work` inside a savepoint of `trx` that is always rolled back, whether `work` succeeds or
 * throws: its effects are undone while the transaction around it goes on (a sandbox call's rehearsal).
 */
export async function withinRolledBackSavepoint<T>(
  trx: Transaction<Schema>,
  work: () => T | Promise<T>,
): Promise<T> {
  await sql`savepoint rehearsal`.execute(trx);
  try {
    return await work();
  } finally {
    await sql`rollback to savepoint rehearsal`.execute(trx);
    await sql`release savepoint rehearsal`.execute(trx);
  }
}
