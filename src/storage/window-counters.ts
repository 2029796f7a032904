import { counters } from './counters.ts';
import type { Db } from './schema.ts';

/** Where the counters of short windows (a minute or less) live. Longer windows always use the database. */
export interface WindowCounterStore {
  readonly kind: 'memory' | 'redis' | 'database';
  /** Adds one hit and returns the window's count so far; the window ends at expiresAt (now is the caller's clock). */
  hit(key: string, expiresAt: number, now: number): number | Promise<number>;
  /** Whether the store's server answers now (/readyz); absent: the store has no server of its own. */
  ready?(): Promise<boolean>;
  /** Hands the store the app's logger for its outage lines. */
  useLog?(log: CounterStoreLog): void;
  close(): Promise<void>;
}

/** The longest window kept in the window store; anything longer must survive a restart. */
export const SHORT_WINDOW_SECONDS = 60;

/**
 * One process on the embedded database is the whole service, so its per-minute counters can live in
 * memory: exact (one thread), and a restart forgets at most the current minute.
 */
export class MemoryWindowCounters implements WindowCounterStore {
  readonly kind = 'memory';
  private readonly windows = new Map<string, { count: number; expiresAt: number }>();
  private hitsSinceSweep = 0;

  hit(key: string, expiresAt: number, now: number): number {
    if (++this.hitsSinceSweep >= 10_000) this.sweep(now);
    const window = this.windows.get(key);
    if (window) return ++window.count;
    this.windows.set(key, { count: 1, expiresAt });
    return 1;
  }

  private sweep(now: number): void {
    this.hitsSinceSweep = 0;
    for (const [key, window] of this.windows) if (window.expiresAt < now) this.windows.delete(key);
  }

  async close(): Promise<void> {
    this.windows.clear();
  }
}

export interface CounterStoreLog {
  warn(details: Record<string, unknown>, message: string): void;
  info(details: Record<string, unknown>, message: string): void;
}

/** Before the app hands over its logger: the same JSON line shape pino writes, on stderr. */
export const stderrLog: CounterStoreLog = {
  warn: (details, msg) =>
    process.stderr.write(`${JSON.stringify({ level: 40, time: Date.now(), ...details, msg })}\n`),
  info: (details, msg) =>
    process.stderr.write(`${JSON.stringify({ level: 30, time: Date.now(), ...details, msg })}\n`),
};

/**
 * Several instances on PostgreSQL without Redis share their short windows through the database.
 *
 * Each hit is its own statement on a pool connection, committed asynchronously
 * (`synchronous_commit = off` for that one transaction): every request of one token upserts the
 * same row, and a synchronous commit would hold the row lock through the WAL flush, so one token's
 * requests would queue behind each other's disk syncs. A crash of the database server may forget
 * the hits of its last fraction of a second (as a restarted Redis forgets its windows), never a
 * user's write: those commit synchronously, and a daily quota is spent inside its write's transaction.
 */
export class DatabaseWindowCounters implements WindowCounterStore {
  private readonly db: Db;
  private readonly engine: 'sqlite' | 'postgres';
  readonly kind = 'database';
  constructor(db: Db, engine: 'sqlite' | 'postgres') {
    this.db = db;
    this.engine = engine;
  }

  hit(key: string, expiresAt: number): Promise<number> {
    // The embedded engine has no asynchronous commit (and serves one process: memory counters).
    return this.engine === 'postgres'
      ? counters.hitCommittedLazily(this.db, key, expiresAt)
      : counters.hit(this.db, key, expiresAt);
  }

  async close(): Promise<void> {}
}
