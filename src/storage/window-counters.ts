import { type CountedWindow, counters } from './counters.ts';
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

/** A store Redis falls back on while it is away: it takes over Redis's counts, and hands its own back. */
export interface FallbackWindowCounterStore extends WindowCounterStore {
  readonly kind: 'memory' | 'database';
  /**
   * Raises each window to at least the count given (what Redis had counted when it went away), so
   * the hits that follow count on from there; a window already higher keeps its count.
   */
  raise(windows: readonly CountedWindow[]): void | Promise<void>;
  /** The short windows still open at `now` and their counts, to seed Redis from when it is back. */
  openWindows(now: number): CountedWindow[] | Promise<CountedWindow[]>;
}

/**
 * Whether a counter of the table is a short window's: its key ends with the window's start
 * (counterKey in src/core/rate-limit.ts), and the table holds hourly and daily windows too.
 */
function isShortWindow(window: CountedWindow): boolean {
  const start = Number(window.key.slice(window.key.lastIndexOf(':') + 1));
  return Number.isFinite(start) && window.expiresAt - start <= SHORT_WINDOW_SECONDS * 1000;
}

/** The longest window kept in the window store; anything longer must survive a restart. */
export const SHORT_WINDOW_SECONDS = 60;

/**
 * One process on the embedded database is the whole service, so its per-minute counters can live in
 * memory: exact (one thread), and a restart forgets at most the current minute.
 */
export class MemoryWindowCounters implements FallbackWindowCounterStore {
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

  raise(windows: readonly CountedWindow[]): void {
    for (const { key, count, expiresAt } of windows) {
      const window = this.windows.get(key);
      if (!window) this.windows.set(key, { count, expiresAt });
      else if (window.count < count) window.count = count;
    }
  }

  openWindows(now: number): CountedWindow[] {
    const open: CountedWindow[] = [];
    for (const [key, window] of this.windows)
      if (window.expiresAt > now) open.push({ key, count: window.count, expiresAt: window.expiresAt });
    return open.filter(isShortWindow);
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

/** A hit waiting for the statement that counts it. */
interface PendingHit {
  key: string;
  expiresAt: number;
  resolve(count: number): void;
  reject(error: unknown): void;
}

/**
 * Several instances on PostgreSQL without Redis share their short windows through the database.
 *
 * Hits go to PostgreSQL in batches, one statement at a time per instance: a hit that arrives while
 * none is under way is sent at once, alone; the hits that arrive while one is under way wait for it
 * and go together in the next, one row per window, the window's hits added at once. Under load that
 * is one statement for several requests (about five a statement under the two-instance PostgreSQL
 * write benchmark) instead of one each, a separate transaction and round trip every time. Counts stay exact: every
 * hit is added to the shared row before its request goes on, and the hits of one window in a batch
 * take the counts up to the row's new count in turn. The windows of a batch are upserted in key
 * order, so two instances' batches lock shared rows in the same order and cannot deadlock.
 *
 * Each statement is committed asynchronously (`synchronous_commit = off` for that one transaction):
 * every request of one token upserts the same row, and a synchronous commit would hold the row lock
 * through the WAL flush, so one token's requests would queue behind each other's disk syncs. A crash
 * of the database server may forget the hits of its last fraction of a second (as a restarted Redis
 * forgets its windows), never a user's write: those commit synchronously, and a daily quota is spent
 * inside its write's transaction. A statement that fails (the database away) fails every hit it
 * carried, each request answered 503 as a single hit's would be.
 */
export class DatabaseWindowCounters implements FallbackWindowCounterStore {
  private readonly db: Db;
  private readonly engine: 'sqlite' | 'postgres';
  readonly kind = 'database';
  private waiting: PendingHit[] = [];
  private sending = false;
  constructor(db: Db, engine: 'sqlite' | 'postgres') {
    this.db = db;
    this.engine = engine;
  }

  hit(key: string, expiresAt: number): Promise<number> {
    // The embedded engine has no asynchronous commit and no round trip to save (and serves one
    // process: memory counters, unless a test asks for this store).
    if (this.engine === 'sqlite') return counters.hit(this.db, key, expiresAt);
    return new Promise((resolve, reject) => {
      this.waiting.push({ key, expiresAt, resolve, reject });
      if (!this.sending) void this.send();
    });
  }

  /** Sends the waiting hits, batch after batch, until none is left. */
  private async send(): Promise<void> {
    this.sending = true;
    while (this.waiting.length > 0) {
      const batch = this.waiting;
      this.waiting = [];
      const byWindow = new Map<string, PendingHit[]>();
      for (const hit of batch) {
        const hits = byWindow.get(hit.key);
        if (hits) hits.push(hit);
        else byWindow.set(hit.key, [hit]);
      }
      const keys = [...byWindow.keys()].sort();
      const added: number[] = [];
      const ends: number[] = [];
      for (const key of keys) {
        const hits = byWindow.get(key) as PendingHit[];
        added.push(hits.length);
        ends.push(hits[0].expiresAt);
      }
      try {
        const counts = await counters.hitManyCommittedLazily(this.db, keys, added, ends);
        for (const [key, hits] of byWindow) {
          const last = counts.get(key);
          if (last === undefined) throw new Error(`the counter of ${key} was not returned`);
          for (let i = 0; i < hits.length; i++) hits[i].resolve(last - hits.length + 1 + i);
        }
      } catch (error) {
        for (const hit of batch) hit.reject(error);
      }
    }
    this.sending = false;
  }

  async raise(windows: readonly CountedWindow[]): Promise<void> {
    await counters.raise(this.db, windows);
  }

  async openWindows(now: number): Promise<CountedWindow[]> {
    const rows = await counters.endingWithin(this.db, now, now + SHORT_WINDOW_SECONDS * 1000);
    return rows.filter(isShortWindow);
  }

  async close(): Promise<void> {}
}
