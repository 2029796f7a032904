// The per-minute windows in Redis, shared by every instance. Its own module so that ioredis is
// loaded only where REDIS_URL is set (src/deps.ts imports it then).
import { Redis } from 'ioredis';
import { type Clock, MS, systemClock } from '../clock.ts';
import type { CountedWindow } from './counters.ts';
import {
  type CounterStoreLog,
  type FallbackWindowCounterStore,
  MemoryWindowCounters,
  stderrLog,
  type WindowCounterStore,
} from './window-counters.ts';

/** How often an instance checks that Redis answers (while it holds counts or is without Redis). */
const PROBE_EVERY_MS = MS.second;
/**
 * How long a window seeded from the database after an outage remembers the count it was seeded
 * with: long enough for every other instance to see Redis back (their reconnects are at most a
 * second apart) and add only what the database counted since, short enough that a later outage in
 * the same window is not taken for the same one.
 */
const SEED_MARK_MS = 10 * MS.second;

/**
 * After an outage, one window: KEYS[1] the window, KEYS[2] its seed mark; ARGV: the database's count
 * of the window as this instance read it, the hits this instance counted there during the outage,
 * the window's time to live (ms), the mark's. A window Redis lost (restarted empty) or never had is
 * set to the database's count, which holds what Redis had counted (raised into it at the outage's
 * start) and the outage's hits; the mark records that count, so the next instance adds only what
 * the database counted after it. A window Redis kept gets this instance's outage hits added.
 */
const SEED_WINDOW = `
local counted, own, ttl, markTtl = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3], ARGV[4]
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('SET', KEYS[1], counted, 'PX', ttl)
  redis.call('SET', KEYS[2], counted, 'PX', markTtl)
  return counted
end
local seeded = redis.call('GET', KEYS[2])
if seeded then
  local since = counted - tonumber(seeded)
  if since <= 0 then return tonumber(redis.call('GET', KEYS[1])) end
  redis.call('SET', KEYS[2], counted, 'KEEPTTL')
  return redis.call('INCRBY', KEYS[1], since)
end
return redis.call('INCRBY', KEYS[1], own)
`;

interface SeedingClient extends Redis {
  seedWindow(
    window: string,
    mark: string,
    counted: number,
    own: number,
    ttl: number,
    markTtl: number,
  ): Promise<number>;
}

export interface RedisWindowCountersOptions {
  connectTimeoutMs?: number;
  commandTimeoutMs?: number;
  fallback?: FallbackWindowCounterStore;
  /** The clock the callers' windows are on (the app's), for the windows still open. */
  clock?: Clock;
}

/**
 * Shared by every instance; INCR is atomic, and the key expires with its window.
 *
 * Redis is optional for correctness, so its outage must not fail requests: the client fails fast (no
 * offline queue, one retry, short connect and command timeouts) and while Redis is away the windows
 * are counted by `fallback`: on PostgreSQL the database's shared table (DatabaseWindowCounters), so
 * a limit still holds across instances; on the embedded engine, whose one process is the whole
 * service, its memory.
 *
 * The limit holds across the outage and Redis's return, even empty (it runs without persistence):
 * - each instance remembers the last count Redis answered for every open window, and when Redis
 *   goes away raises the fallback's windows to those counts before counting on there: the outage
 *   starts from what Redis had counted, not from zero;
 * - when Redis answers again, the windows still open are seeded from the fallback (SEED_WINDOW)
 *   before it is trusted again, the hits arriving meanwhile waiting for that: a restarted Redis
 *   starts from what was counted before and during the outage, not from zero.
 * One warn line marks the start of an outage and one its end; the client keeps reconnecting in the
 * background.
 */
export class RedisWindowCounters implements WindowCounterStore {
  private readonly prefix: string;
  readonly kind = 'redis';
  private readonly client: SeedingClient;
  private readonly fallback: FallbackWindowCounterStore;
  private readonly clock: Clock;
  private outageSince: number | undefined;
  private closing = false;
  /** Settles when the first connection attempt has succeeded or failed: until then a hit waits for it. */
  private firstAttempt: Promise<void> | undefined;
  /** The last count Redis answered for each window still open, by window key. */
  private readonly seen = new Map<string, CountedWindow>();
  /** This instance's hits counted by the fallback during the outage, by window key. */
  private countedAside = new Map<string, CountedWindow>();
  /** While the fallback is raised to `seen` at an outage's start: the fallback's hits wait for it. */
  private handover: Promise<void> | undefined;
  /** While Redis is seeded from the fallback at an outage's end: every hit waits for it. */
  private seeding: Promise<void> | undefined;
  private readonly probeTimer: NodeJS.Timeout;
  private probing = false;
  /** The first failed seeding of an outage is logged, not every retry. */
  private seedFailureLogged = false;
  private log: CounterStoreLog = stderrLog;

  constructor(url: string, prefix: string, options: RedisWindowCountersOptions = {}) {
    this.prefix = prefix;
    this.fallback = options.fallback ?? new MemoryWindowCounters();
    this.clock = options.clock ?? systemClock;
    const client = new Redis(url, {
      enableAutoPipelining: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: options.connectTimeoutMs ?? 1000,
      commandTimeout: options.commandTimeoutMs ?? 500,
      // Reconnect for ever, at most a second apart, so the counters return soon after Redis does.
      retryStrategy: (times) => Math.min(times * 100, 1000),
    });
    client.defineCommand('seedWindow', { numberOfKeys: 2, lua: SEED_WINDOW });
    this.client = client as SeedingClient;
    // Every failed connection attempt is emitted here; the outage itself is logged once, in markDown().
    this.client.on('error', () => {});
    this.client.on('ready', () => void this.recover());
    this.client.on('close', () => {
      if (!this.closing) this.markDown('connection closed');
    });
    const connectTimeout = options.connectTimeoutMs ?? 1000;
    this.firstAttempt = new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.client.off('ready', done).off('error', done).off('close', done);
        this.firstAttempt = undefined;
        resolve();
      };
      const timer = setTimeout(done, connectTimeout);
      timer.unref();
      this.client.once('ready', done).once('error', done).once('close', done);
    });
    this.probeTimer = setInterval(() => void this.probe(), PROBE_EVERY_MS);
    this.probeTimer.unref();
  }

  /** The app's logger, once it has one (the store is built before the app). */
  useLog(log: CounterStoreLog): void {
    this.log = log;
  }

  /** Whether Redis answers now (for /readyz). */
  async ready(): Promise<boolean> {
    if (this.client.status !== 'ready') return false;
    try {
      return (await this.client.ping()) === 'PONG';
    } catch {
      return false;
    }
  }

  /** True while the counters are kept by the fallback instead of Redis (until Redis is seeded again). */
  get degraded(): boolean {
    return this.outageSince !== undefined;
  }

  async hit(key: string, expiresAt: number, now: number): Promise<number> {
    // The requests of the first moments after start wait for the first connection, not for later ones.
    if (this.firstAttempt) await this.firstAttempt;
    if (this.seeding) await this.seeding;
    if (this.outageSince !== undefined || this.client.status !== 'ready')
      return this.countAside(key, expiresAt, now, undefined);
    const redisKey = this.redisKey(key);
    // Relative expiry: the window's end is on our clock, which need not agree with Redis's.
    const ttl = Math.max(1, expiresAt - now);
    try {
      const results = await this.client.multi().incr(redisKey).pexpire(redisKey, ttl).exec();
      const [error, reply] = results?.[0] ?? [new Error('no reply from Redis'), 0];
      if (error) throw error;
      const count = Number(reply);
      this.remember(key, count, expiresAt);
      return count;
    } catch (error) {
      return this.countAside(key, expiresAt, now, error);
    }
  }

  private redisKey(key: string): string {
    return `${this.prefix}:rate:${key}`;
  }

  private remember(key: string, count: number, expiresAt: number): void {
    const window = this.seen.get(key);
    if (!window) this.seen.set(key, { key, count, expiresAt });
    else if (window.count < count) window.count = count;
  }

  /** One hit counted by the fallback, once it starts from what Redis had counted. */
  private async countAside(key: string, expiresAt: number, now: number, error: unknown): Promise<number> {
    this.markDown((error as Error | undefined)?.message ?? `connection ${this.client.status}`);
    if (this.handover) await this.handover;
    // Counted before it is sent: one in flight when Redis is seeded is then added there too
    // (refusing early), never left out.
    const aside = this.countedAside.get(key);
    if (aside) aside.count++;
    else this.countedAside.set(key, { key, count: 1, expiresAt });
    return this.fallback.hit(key, expiresAt, now);
  }

  private markDown(cause: string): void {
    if (this.outageSince !== undefined) return;
    this.outageSince = Date.now();
    const where = this.fallback.kind === 'database' ? 'in the database' : 'in this process';
    this.log.warn(
      { cause },
      `Redis unavailable: per-minute rate limits are counted ${where} until it is back`,
    );
    const now = this.clock.now();
    const open = [...this.seen.values()].filter((window) => window.expiresAt > now);
    this.handover = Promise.resolve(this.fallback.raise(open))
      .catch((raiseError: Error) =>
        this.log.warn(
          { cause: raiseError.message },
          "Redis unavailable: the counts it had reached could not be carried over; counting on from the fallback's",
        ),
      )
      .finally(() => {
        this.handover = undefined;
      });
  }

  /** Seeds Redis from the fallback's windows still open, then counts there again. */
  private recover(): Promise<void> {
    if (this.outageSince === undefined || this.closing) return Promise.resolve();
    if (!this.seeding)
      this.seeding = this.seed().finally(() => {
        this.seeding = undefined;
      });
    return this.seeding;
  }

  private async seed(): Promise<void> {
    if (this.handover) await this.handover;
    const own = this.countedAside;
    this.countedAside = new Map();
    try {
      const now = this.clock.now();
      const windows = new Map<string, CountedWindow>();
      for (const window of await this.fallback.openWindows(now)) windows.set(window.key, window);
      for (const [key, window] of own)
        if (!windows.has(key) && window.expiresAt > now) windows.set(key, window);
      await Promise.all(
        [...windows.values()].map(async ({ key, count, expiresAt }) => {
          const ttl = Math.max(1, expiresAt - now);
          const redisKey = this.redisKey(key);
          const seeded = await this.client.seedWindow(
            redisKey,
            `${redisKey}:seeded`,
            count,
            own.get(key)?.count ?? 0,
            ttl,
            Math.min(ttl, SEED_MARK_MS),
          );
          this.remember(key, Number(seeded), expiresAt);
        }),
      );
    } catch (error) {
      // Still away (or the fallback is): stay there; the next reconnect or probe seeds again.
      for (const [key, window] of own) {
        const aside = this.countedAside.get(key);
        if (aside) aside.count += window.count;
        else this.countedAside.set(key, window);
      }
      if (!this.seedFailureLogged)
        this.log.warn(
          { cause: (error as Error).message },
          'Redis answers but cannot be seeded yet: retrying',
        );
      this.seedFailureLogged = true;
      return;
    }
    const seconds = Math.round((Date.now() - (this.outageSince ?? Date.now())) / 100) / 10;
    this.outageSince = undefined;
    this.seedFailureLogged = false;
    this.log.warn({ outage_seconds: seconds }, 'Redis is back: per-minute rate limits are shared again');
  }

  /**
   * Every second: forgets ended windows; an instance holding counts notices Redis gone even with no
   * request to send (so it hands them over), and one without Redis notices it back even where the
   * connection never closed.
   */
  private async probe(): Promise<void> {
    const now = this.clock.now();
    for (const [key, window] of this.seen) if (window.expiresAt <= now) this.seen.delete(key);
    if (this.closing || this.probing || this.client.status !== 'ready') return;
    if (this.outageSince === undefined && this.seen.size === 0) return;
    this.probing = true;
    try {
      await this.client.ping();
      if (this.outageSince !== undefined) await this.recover();
    } catch (error) {
      this.markDown((error as Error).message);
    } finally {
      this.probing = false;
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.probeTimer);
    await this.fallback.close();
    if (this.client.status === 'ready') await this.client.quit().catch(() => this.client.disconnect());
    else this.client.disconnect();
  }
}
