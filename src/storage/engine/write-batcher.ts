import { type Compilable, sql, type Transaction } from 'kysely';
import type { Database } from '../database.ts';
import type { Schema } from '../schema.ts';
import { LOCK_TIMEOUT_SQLSTATE, LOST_RACE_SQLSTATES, SERVER_CLASSES } from '../sqlstates.ts';
import { arg, prepare, runDeferred } from './prepared.ts';

export type WriteUnit<T> = (trx: Transaction<Schema>) => Promise<T>;

interface Queued {
  unit: WriteUnit<unknown>;
  lane?: string;
  resolve(value: unknown): void;
  reject(error: unknown): void;
  /** How many of its batches this unit lost a lock cycle or a serialization race in. */
  lostRaces?: number;
  /** PostgreSQL: when its lock waits, counted from its arrival, reach the bound (Date.now() clock). */
  deadline?: number;
}

/** A lane's units waiting for a transaction, and how many of its transactions are under way. */
interface Lane {
  queue: Queued[];
  running: number;
}

const MAX_BATCH = 256;

/** A unit's savepoint in a shared transaction: prepared, so the embedded engine runs them at once. */
const statement = (text: string) =>
  prepare((db) => ({ compile: () => sql.raw(text).compile(db) }) as Compilable<never>);
const savepoint = statement('savepoint write_unit');
const release = statement('release write_unit');
const rollbackTo = statement('rollback to write_unit');
/** The rest of the transaction's lock waits end after this long: deferred, it costs no round trip. */
const setLockTimeout = prepare(
  (db) =>
    ({
      compile: () => sql`select set_config('lock_timeout', ${arg(0)}, true)`.compile(db),
    }) as Compilable<never>,
  { deferred: true },
);

/**
 * A lock_timeout set for a unit may end its wait this much past its deadline before it is set anew
 * (units of one batch start within milliseconds of each other: one setting serves them all).
 */
const DEADLINE_SLACK_MS = 50;

/**
 * A write waited past its bound (Database.lockWaitMs) for locks held by other transactions: its own
 * wait (lock_timeout, 55P03) or its wait in the queue behind its lane's or the pipeline's earlier
 * transactions, which were waiting for one. It was rolled back, or never ran.
 */
export class LockWaitTimedOut extends Error {
  readonly code = LOCK_TIMEOUT_SQLSTATE;
  readonly boundMs: number;

  constructor(boundMs: number, cause?: unknown) {
    super(`a write waited longer than ${boundMs} ms for a lock held by another transaction`, { cause });
    this.boundMs = boundMs;
  }
}

/**
 * A unit that lost this many races is answered with the last one's error (a 503: worth repeating)
 * instead of waiting for another batch, so no unit can go round for ever.
 */
const MAX_LOST_RACES = 3;

/** On PostgreSQL, a lane's transactions under way at once before its next units wait and batch. */
const UNBATCHED_PER_LANE = 2;

export interface WriteBatcherOptions {
  /** UNBATCHED_PER_LANE unless set (tests set 0 to batch every lane's units). */
  unbatchedPerLane?: number;
}

/**
 * On PostgreSQL, the shared transactions of pipelined units (runPipelined) under way at once in
 * this process. One, as a rule: units arriving meanwhile wait and go together in the next, so a
 * loaded instance sends fewer, larger transactions (one round trip and one flush each). A second
 * starts only when a full batch (MAX_BATCH) waits, which one transaction could not take anyway.
 */
const PIPELINED_UNDER_WAY = 1;
const PIPELINED_UNDER_WAY_WHEN_FULL = 2;

/**
 * A statement of a pipelined unit's shared transaction failed: which unit caused it cannot be told,
 * so each is answered this and goes again alone (transactAnsweredAtCommit).
 */
export class SharedTransactionFailed extends Error {
  constructor(cause: unknown) {
    super('a shared transaction of pipelined writes failed', { cause });
  }
}

/**
 * Whether a shared transaction failed on one of its statements (which some unit may have caused),
 * rather than on its connection or server: those fail every unit as they would fail it alone, so
 * each is answered with that error at once instead of trying again.
 */
function statementFailure(error: unknown): boolean {
  const { severity, code } = (error ?? {}) as { severity?: unknown; code?: unknown };
  return severity === 'ERROR' && typeof code === 'string' && !SERVER_CLASSES.has(code.slice(0, 2));
}

/**
 * Group commit: units that share a transaction each run inside a savepoint, so a unit that throws
 * is rolled back alone and gets its own error, and every caller hears back only after the shared
 * COMMIT, so an acknowledged write is on disk. A batch of one takes no savepoint.
 *
 * The embedded engine has one writer: every unit waits its turn and those that arrive together go
 * as one batch.
 *
 * On PostgreSQL a unit runs in a transaction of its own, as many side by side as the pool allows,
 * except when its lane (the member the call acts for) already has two transactions under way in
 * this process: then it waits, and the lane's waiting units go as one batch when one of the two
 * ends. Concurrent writes of one member wait on that member's rows (its daily quota, locked until
 * the COMMIT is flushed) and would go one flush at a time; batched, they share the lock and the
 * flush. Writes of different members, which PostgreSQL runs in parallel, are not held back.
 * A batch of several first takes an advisory lock of its lane, so the same member's batches in
 * several instances take turns (it travels with the first statement: no round trip of its own).
 *
 * A batch holds several units' row locks at once, which a single write never did; should that close
 * a lock cycle with another transaction, PostgreSQL fails one statement (deadlock, 40P01, after
 * deadlock_timeout). That unit (or one that lost a serialization race, 40001) is rolled back to its
 * savepoint, the batch commits what it did (freeing its rows), and that unit and the rest of the
 * batch wait for the lane's next one; a unit that loses MAX_LOST_RACES times gets the error.
 */
export class WriteBatcher {
  private readonly database: Database;
  private readonly lanes = new Map<string, Lane>();
  private readonly pipeline: Lane = { queue: [], running: 0 };
  private readonly unbatchedPerLane: number;
  /** Database.lockWaitMs on PostgreSQL; 0 (no bound) on the embedded engine, which has one writer. */
  private readonly lockWaitMs: number;

  constructor(database: Database, options: WriteBatcherOptions = {}) {
    this.database = database;
    this.unbatchedPerLane = options.unbatchedPerLane ?? UNBATCHED_PER_LANE;
    this.lockWaitMs = database.engine === 'postgres' ? (database.lockWaitMs ?? 0) : 0;
  }

  /** When a unit arriving now must be done with its lock waits. */
  private deadline(): number | undefined {
    return this.lockWaitMs > 0 ? Date.now() + this.lockWaitMs : undefined;
  }

  /** The error a unit is answered: a lock wait past lock_timeout (the session's bound) says so. */
  private told(error: unknown): unknown {
    const code = (error as { code?: unknown } | null)?.code;
    return code === LOCK_TIMEOUT_SQLSTATE && !(error instanceof LockWaitTimedOut) && this.lockWaitMs > 0
      ? new LockWaitTimedOut(this.lockWaitMs, error)
      : error;
  }

  /** Rejects the units whose deadline passed while they waited; returns the others. */
  private unexpired(batch: Queued[]): Queued[] {
    const now = Date.now();
    const alive = batch.filter((item) => item.deadline === undefined || item.deadline > now);
    if (alive.length < batch.length)
      for (const item of batch) if (!alive.includes(item)) item.reject(new LockWaitTimedOut(this.lockWaitMs));
    return alive;
  }

  /**
   * Sets the transaction's lock_timeout to what is left of the unit's bound when the one in force
   * (`inForceMs`, a wait's length) would let a wait starting now run past its deadline; returns the
   * one in force afterwards. A transaction starts with the session's (lockWaitMs).
   */
  private async bound(trx: Transaction<Schema>, item: Queued, inForceMs = this.lockWaitMs): Promise<number> {
    if (item.deadline === undefined) return inForceMs;
    const left = item.deadline - Date.now();
    if (inForceMs <= left + DEADLINE_SLACK_MS) return inForceMs;
    const ms = Math.max(1, left);
    await setLockTimeout(trx, `${ms}ms`);
    return ms;
  }

  run<T>(unit: WriteUnit<T>, lane?: string): Promise<T> {
    const embedded = this.database.engine === 'sqlite';
    if (!embedded && lane === undefined)
      return this.database.db
        .transaction()
        .execute(unit)
        .catch((error: unknown) => {
          throw this.told(error);
        });
    const key = embedded ? '' : (lane as string);
    let state = this.lanes.get(key);
    if (!state) {
      state = { queue: [], running: 0 };
      this.lanes.set(key, state);
    }
    if (!embedded && state.running < this.unbatchedPerLane && state.queue.length === 0) {
      state.running++;
      const ran = state;
      return this.database.db
        .transaction()
        .execute(unit)
        .catch((error: unknown) => {
          throw this.told(error);
        })
        .finally(() => this.ended(key, ran));
    }
    const waiting = state;
    const deadline = embedded ? undefined : this.deadline();
    return new Promise<T>((resolve, reject) => {
      waiting.queue.push({ unit, resolve: resolve as (value: unknown) => void, reject, deadline });
      // The embedded engine's one writer (or a lane that batches everything) is started by its first
      // unit; the next ones join its batches.
      if (waiting.running === 0) {
        waiting.running++;
        setImmediate(() => void this.flush(key, waiting));
      }
    });
  }

  /**
   * A unit whose statements all travel with its COMMIT (statements answered later, deferred writes):
   * on PostgreSQL, units of any lane share one transaction, so many go in one round trip and one
   * flush. One such transaction is under way (two while a full batch waits); a unit arriving when
   * none is goes at once (alone, when no other waits), the rest wait and go together in the next. A
   * shared transaction runs its units in lane order, so two instances' transactions take members'
   * rows in one order. If one of its statements fails, every unit in it is answered
   * SharedTransactionFailed; a unit alone in its transaction, or one whose connection or server
   * failed, gets that error as it is. The embedded engine runs it as any unit.
   */
  runPipelined<T>(unit: WriteUnit<T>, lane?: string): Promise<T> {
    if (this.database.engine === 'sqlite') return this.run(unit, lane);
    const pipeline = this.pipeline;
    return new Promise<T>((resolve, reject) => {
      const deadline = this.deadline();
      pipeline.queue.push({ unit, lane, resolve: resolve as (value: unknown) => void, reject, deadline });
      if (pipeline.running < this.pipelineSlots()) {
        pipeline.running++;
        void this.flushPipeline();
      }
    });
  }

  private async flushPipeline(): Promise<void> {
    const pipeline = this.pipeline;
    // A slot past the first goes on only while a full batch waits.
    do await this.runShared(pipeline.queue.splice(0, MAX_BATCH));
    while (pipeline.queue.length > 0 && pipeline.running <= this.pipelineSlots());
    pipeline.running--;
  }

  /** How many shared transactions may be under way for what waits now. */
  private pipelineSlots(): number {
    return this.pipeline.queue.length >= MAX_BATCH ? PIPELINED_UNDER_WAY_WHEN_FULL : PIPELINED_UNDER_WAY;
  }

  /**
   * One shared transaction of pipelined units: each answered its value once it committed. Its lock
   * waits end by the earliest unit's deadline; a lock wait past it answers every unit so (going
   * again alone, each would wait anew, past its own bound).
   */
  private async runShared(waited: Queued[]): Promise<void> {
    const batch = this.unexpired(waited);
    if (batch.length === 0) return;
    const laneOf = (item: Queued) => item.lane ?? '';
    batch.sort((a, b) => (laneOf(a) < laneOf(b) ? -1 : laneOf(a) > laneOf(b) ? 1 : 0));
    const earliest = batch.reduce((first, item) =>
      (item.deadline ?? 0) < (first.deadline ?? 0) ? item : first,
    );
    const values: unknown[] = [];
    try {
      await this.database.db.transaction().execute(async (trx) => {
        await this.bound(trx, earliest);
        for (const item of batch) values.push(await item.unit(trx));
      });
    } catch (error) {
      const told = this.told(error);
      const answer =
        batch.length > 1 && told === error && statementFailure(error)
          ? new SharedTransactionFailed(error)
          : told;
      for (const item of batch) item.reject(answer);
      return;
    }
    for (const [i, item] of batch.entries()) item.resolve(values[i]);
  }

  /** A lane's transaction ended: its waiting units go as one batch, or the lane is done. */
  private ended(key: string, lane: Lane): void {
    if (lane.queue.length > 0) void this.flush(key, lane);
    else if (--lane.running === 0 && this.lanes.get(key) === lane) this.lanes.delete(key);
  }

  /** Runs the lane's waiting units in batches until none waits; holds one of its `running` slots. */
  private async flush(key: string, lane: Lane): Promise<void> {
    while (lane.queue.length > 0) {
      const batch = lane.queue.splice(0, MAX_BATCH);
      const again = await this.runBatch(key, batch);
      lane.queue.unshift(...again);
    }
    if (--lane.running === 0 && this.lanes.get(key) === lane) this.lanes.delete(key);
  }

  /**
   * One batch in one transaction; answers its units and returns those to run again. On PostgreSQL a
   * unit whose deadline passed while it waited is answered LockWaitTimedOut without running, and
   * each unit's lock waits end by its deadline.
   */
  private async runBatch(key: string, waited: Queued[]): Promise<Queued[]> {
    const batch = this.unexpired(waited);
    if (batch.length === 0) return [];
    const settled: (() => void)[] = [];
    const again: Queued[] = [];
    try {
      await this.database.db.transaction().execute(async (trx) => {
        let inForceMs = await this.bound(trx, batch[0]);
        if (batch.length === 1) {
          const [item] = batch;
          const value = await item.unit(trx);
          settled.push(() => item.resolve(value));
          return;
        }
        if (this.database.engine === 'postgres')
          await runDeferred(trx, sql`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`);
        for (const [index, item] of batch.entries()) {
          if (item.deadline !== undefined && item.deadline <= Date.now()) {
            settled.push(() => item.reject(new LockWaitTimedOut(this.lockWaitMs)));
            continue;
          }
          inForceMs = await this.bound(trx, item, inForceMs);
          await savepoint(trx);
          try {
            const value = await item.unit(trx);
            await release(trx);
            settled.push(() => item.resolve(value));
          } catch (error) {
            await rollbackTo(trx);
            await release(trx);
            const lost = LOST_RACE_SQLSTATES.has((error as { code?: string }).code ?? '');
            if (lost) item.lostRaces = (item.lostRaces ?? 0) + 1;
            if (!lost || (item.lostRaces ?? 0) >= MAX_LOST_RACES) {
              const told = this.told(error);
              settled.push(() => item.reject(told));
              continue;
            }
            // Commit what is done, freeing its rows for the other side; this unit and the rest wait.
            again.push(...batch.slice(index));
            return;
          }
        }
      });
      for (const settle of settled) settle();
      return again;
    } catch (error) {
      const told = this.told(error);
      for (const item of batch) item.reject(told);
      return [];
    }
  }
}
