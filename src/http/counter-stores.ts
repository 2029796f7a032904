import { Redis } from 'ioredis';
import type { Db } from '../storage/schema.ts';
import { counters } from './rate-limit.ts';

/** Where the counters of short windows (a minute or less) live. Longer windows always use the database. */
export interface WindowCounterStore {
  readonly kind: 'memory' | 'redis' | 'database';
  /** Adds one hit and returns the window's count so far; the window ends at expiresAt (now is the caller's clock). */
  hit(key: string, expiresAt: number, now: number): number | Promise<number>;
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

/** Shared by every instance; INCR is atomic, and the key expires with its window. */
export class RedisWindowCounters implements WindowCounterStore {
  readonly kind = 'redis';
  private readonly client: Redis;

  constructor(
    url: string,
    private readonly prefix: string,
  ) {
    this.client = new Redis(url, { maxRetriesPerRequest: 2, enableAutoPipelining: true });
  }

  async hit(key: string, expiresAt: number, now: number): Promise<number> {
    const redisKey = `${this.prefix}:rate:${key}`;
    // Relative expiry: the window's end is on our clock, which need not agree with Redis's.
    const ttl = Math.max(1, expiresAt - now);
    const results = await this.client.multi().incr(redisKey).pexpire(redisKey, ttl).exec();
    const [error, count] = results?.[0] ?? [new Error('no reply from Redis'), 0];
    if (error) throw error;
    return Number(count);
  }

  async close(): Promise<void> {
    await this.client.quit();
  }
}

/** Several instances on PostgreSQL without Redis share their short windows through the database. */
export class DatabaseWindowCounters implements WindowCounterStore {
  readonly kind = 'database';
  constructor(private readonly db: Db) {}

  hit(key: string, expiresAt: number): Promise<number> {
    return counters.hit(this.db, key, expiresAt);
  }

  async close(): Promise<void> {}
}
