// The per-minute windows in Redis, shared by every instance. Its own module so that ioredis is
// loaded only where REDIS_URL is set (src/deps.ts imports it then).
import { Redis } from 'ioredis';
import {
  type CounterStoreLog,
  MemoryWindowCounters,
  stderrLog,
  type WindowCounterStore,
} from './window-counters.ts';

/**
 * Shared by every instance; INCR is atomic, and the key expires with its window.
 *
 * Redis is optional for correctness, so its outage must not fail requests: the client fails fast (no
 * offline queue, one retry, short connect and command timeouts) and while Redis is away the windows
 * are counted by `fallback`: on PostgreSQL the database's shared table (DatabaseWindowCounters), so
 * a limit still holds across instances; on the embedded engine, whose one process is the whole
 * service, its memory. One warn line marks the start of an outage and one its end; the client keeps
 * reconnecting in the background and the counters move back to Redis when it answers again.
 */
export class RedisWindowCounters implements WindowCounterStore {
  private readonly prefix: string;
  readonly kind = 'redis';
  private readonly client: Redis;
  private readonly fallback: WindowCounterStore;
  private outageSince: number | undefined;
  private closing = false;
  /** Settles when the first connection attempt has succeeded or failed: until then a hit waits for it. */
  private firstAttempt: Promise<void> | undefined;
  private log: CounterStoreLog = stderrLog;

  constructor(
    url: string,
    prefix: string,
    options: { connectTimeoutMs?: number; commandTimeoutMs?: number; fallback?: WindowCounterStore } = {},
  ) {
    this.prefix = prefix;
    this.fallback = options.fallback ?? new MemoryWindowCounters();
    this.client = new Redis(url, {
      enableAutoPipelining: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: options.connectTimeoutMs ?? 1000,
      commandTimeout: options.commandTimeoutMs ?? 500,
      // Reconnect for ever, at most a second apart, so the counters return soon after Redis does.
      retryStrategy: (times) => Math.min(times * 100, 1000),
    });
    // Every failed connection attempt is emitted here; the outage itself is logged once, in fail().
    this.client.on('error', () => {});
    this.client.on('ready', () => this.recovered());
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

  /** True while the counters live in this process's memory instead of Redis. */
  get degraded(): boolean {
    return this.outageSince !== undefined;
  }

  async hit(key: string, expiresAt: number, now: number): Promise<number> {
    // The requests of the first moments after start wait for the first connection, not for later ones.
    if (this.firstAttempt) await this.firstAttempt;
    if (this.client.status !== 'ready') return this.fail(key, expiresAt, now, undefined);
    const redisKey = `${this.prefix}:rate:${key}`;
    // Relative expiry: the window's end is on our clock, which need not agree with Redis's.
    const ttl = Math.max(1, expiresAt - now);
    try {
      const results = await this.client.multi().incr(redisKey).pexpire(redisKey, ttl).exec();
      const [error, count] = results?.[0] ?? [new Error('no reply from Redis'), 0];
      if (error) throw error;
      if (this.outageSince !== undefined) this.recovered();
      return Number(count);
    } catch (error) {
      return this.fail(key, expiresAt, now, error);
    }
  }

  private fail(key: string, expiresAt: number, now: number, error: unknown): number | Promise<number> {
    this.markDown((error as Error | undefined)?.message ?? `connection ${this.client.status}`);
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
  }

  private recovered(): void {
    if (this.outageSince === undefined) return;
    const seconds = Math.round((Date.now() - this.outageSince) / 100) / 10;
    this.outageSince = undefined;
    this.log.warn({ outage_seconds: seconds }, 'Redis is back: per-minute rate limits are shared again');
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.fallback.close();
    if (this.client.status === 'ready') await this.client.quit().catch(() => this.client.disconnect());
    else this.client.disconnect();
  }
}
