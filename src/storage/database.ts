import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import type pg from 'pg';
import { AppendFeed, registerEmbeddedFeed } from './engine/append-feed.ts';
import { AUTH_LISTENER_NAME, type AuthListener, listenForAuthChanges } from './engine/auth-listener.ts';
import { InvalidatingCache } from './engine/invalidating-cache.ts';
import { namingPool } from './engine/named-statements.ts';
import { type DirectRunner, refuseToPrepare, registerDirectRunner } from './engine/prepared.ts';
import { WriteWatchPlugin } from './engine/write-watch.ts';
import type { Db, Executor } from './schema.ts';
import { StorageCondition } from './storage-condition.ts';
import type { CounterStoreLog } from './window-counters.ts';

export type Engine = 'sqlite' | 'postgres';

/** What the lookup cache holds rows of (credentials, members' tier status): a write to any empties it. */
const CACHED_TABLES = new Set(['tokens', 'members', 'sessions', 'tier_requests']);

/** Empties the cache at this process's writes to what it holds; a last-use stamp does not count. */
function watchCachedTables(cache: InvalidatingCache<unknown>): WriteWatchPlugin {
  return new WriteWatchPlugin(CACHED_TABLES, () => cache.invalidate(), new Set(['last_used_at']));
}

export interface Database {
  db: Db;
  engine: Engine;
  /** Where the data lives, without credentials: safe to print. */
  location: string;
  /**
   * Token, session and tier-status lookups that stay exact: emptied by any write to tokens, members,
   * sessions or tier_requests, this process's at once and another's as its engine reveals it (see
   * InvalidatingCache). On PostgreSQL it serves only once listenForChanges() has its listener up.
   */
  authCache?: InvalidatingCache<unknown>;
  /**
   * Wakes whoever waits on a reader's event log after a commit that may have appended to it, this
   * process's or another's (engine/append-feed.ts). On PostgreSQL it hears other instances once
   * listenForChanges() has its listener up.
   */
  appends?: AppendFeed;
  /**
   * PostgreSQL: starts listening for other processes' changes to what the cache holds (after the
   * migrations, which create the triggers that notify) and settles after the first attempt.
   */
  listenForChanges?(): Promise<void>;
  /** The app's logger, once it has one, for the listener's outage lines. */
  useLog?(log: CounterStoreLog): void;
  /** Whether the database can store writes now (a full disk, failing or read-only storage). */
  storage?: StorageCondition;
  /**
   * Writes a little and commits (the storage condition sees the outcome): /readyz calls it while
   * the database cannot write, so an instance the load balancer took out of service comes back.
   */
  probeWrite?(): Promise<void>;
  /**
   * PostgreSQL: how long a write may wait for locks, counted from when it reached the write batcher
   * (lock_timeout); 0: no bound. A little under the statement timeout, so a lock wait is told as one.
   */
  lockWaitMs?: number;
  /** The embedded engine's own handle, for the research index's synchronous full-text reads. */
  sqlite?: SQLite.Database;
  /**
   * The embedded engine: runs `work` in a transaction of its own and commits it before returning,
   * all synchronously, when no transaction is open on the one connection (else undefined, and
   * nothing ran): a short write that must be committed before its caller goes on, without a turn
   * of the write batcher. `run` runs one statement (its rows; none for a write).
   */
  writeAtOnce?<T>(work: (run: DirectRunner) => T): { value: T } | undefined;
  /**
   * Runs fn on a connection free of the statement timeout (PostgreSQL: a pool of one of its own,
   * opened for the call), for migrations: DDL on a large table, or waiting for another instance's
   * migration lock, may rightly take longer than any request should.
   */
  unbounded<T>(fn: (db: Db) => Promise<T>): Promise<T>;
  /** PostgreSQL: the request pool's connections now (for metrics); the embedded engine has no pool. */
  poolUse?(): PoolUse;
  close(): Promise<void>;
}

export interface PoolUse {
  /** Connections open, idle among them, and queries waiting for one. */
  total: number;
  idle: number;
  waiting: number;
  max: number;
}

/** How long PostgreSQL may keep a request waiting before it is answered 503 (DATABASE_*_TIMEOUT_MS). */
export interface DatabaseTimeouts {
  /** A new connection (or a free one from the full pool) must be had within this long; 0: no bound. */
  connectTimeoutMs: number;
  /** One statement may run this long (server statement_timeout, and the client's own wait); 0: no bound. */
  statementTimeoutMs: number;
}

export const DEFAULT_DATABASE_TIMEOUTS: DatabaseTimeouts = {
  connectTimeoutMs: 3000,
  statementTimeoutMs: 15_000,
};

/**
 * The bound of a write's lock waits for a statement timeout: a tenth under it (at most a second), so
 * lock_timeout ends a wait for a lock before statement_timeout would cancel the statement.
 */
export function lockWaitBound(statementTimeoutMs: number): number {
  return statementTimeoutMs - Math.min(1000, Math.floor(statementTimeoutMs / 10));
}

/** The database answers a statement (the readiness check's probe): rejects when it does not. */
export async function probe(executor: Executor): Promise<void> {
  await sql`select 1`.execute(executor);
}

export function openDatabase(url: string, timeouts: DatabaseTimeouts = DEFAULT_DATABASE_TIMEOUTS): Database {
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return openPostgres(url, timeouts);
  if (url.startsWith('sqlite:')) return openSqlite(url.slice('sqlite:'.length));
  throw new Error(`DATABASE_URL must start with sqlite: or postgres:// (got ${url.split(':')[0]}:)`);
}

function openSqlite(path: string): Database {
  const file = path === ':memory:' ? path : resolve(path);
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const sqlite = new SQLite(file);
  // WAL keeps readers off the writer's back; NORMAL sync loses nothing when the process is killed
  // (committed pages are already in the OS), only on a power cut of the whole machine.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  // Checkpoint less often: a page written by many commits is copied back to the file once.
  sqlite.pragma('wal_autocheckpoint = 10000');
  const storage = new StorageCondition('sqlite');
  // Prepared once: pragma() would compile the statement on every request.
  const dataVersion = sqlite.prepare('PRAGMA data_version').pluck();
  const appends = new AppendFeed(() => dataVersion.get() as number);
  const cached = withStatementCache(sqlite, storage, appends);
  const authCache = new InvalidatingCache<unknown>(() => dataVersion.get() as number);
  const watch = watchCachedTables(authCache);
  const db = new Kysely({ dialect: new SqliteDialect({ database: cached }), plugins: [watch] }) as Db;
  registerEmbeddedFeed(db.getExecutor().adapter, appends);
  refuseToPrepare(db, (node) => watch.watches(node));
  const direct: DirectRunner = (text, parameters) => {
    const statement = cached.prepare(text);
    if (statement.reader) return statement.all(parameters);
    statement.run(parameters);
    return [];
  };
  registerDirectRunner(db, direct);
  return {
    db,
    engine: 'sqlite',
    location: file,
    authCache,
    appends,
    sqlite,
    storage,
    useLog: (log) => storage.useLog(log),
    writeAtOnce: (work) => {
      if (sqlite.inTransaction) return undefined;
      direct('begin immediate', []);
      try {
        const value = work(direct);
        direct('commit', []);
        return { value };
      } catch (error) {
        if (sqlite.inTransaction) direct('rollback', []);
        throw error;
      }
    },
    probeWrite: async () => {
      // Rewriting the header's user_version with its own value writes a page and commits, as any
      // write does; through Kysely's handle, so the storage condition sees the outcome.
      const version = Number(sqlite.pragma('user_version', { simple: true }));
      await db.transaction().execute((trx) => sql.raw(`PRAGMA user_version = ${version}`).execute(trx));
    },
    unbounded: (fn) => fn(db),
    close: () => {
      appends.stop();
      return db.destroy();
    },
  };
}

/**
 * Kysely prepares every query anew; caching prepared statements by SQL text removes that cost. Kysely
 * needs only prepare and close from the handle. Every statement run through it (Kysely's and the
 * direct runner's) reports a failure, and a COMMIT its success, to the storage condition.
 */
function withStatementCache(
  sqlite: SQLite.Database,
  storage: StorageCondition,
  appends: AppendFeed,
): SQLite.Database {
  const cache = new Map<string, SQLite.Statement>();
  const prepare = (requested: string) => {
    // Kysely opens transactions with a deferred BEGIN. A deferred transaction that reads and then
    // writes fails at once with SQLITE_BUSY (no busy wait) when another process committed in
    // between; BEGIN IMMEDIATE takes the write lock up front and waits for it with busy_timeout.
    const text = requested === 'begin' ? 'begin immediate' : requested;
    let statement = cache.get(text);
    if (!statement) {
      statement = watched(sqlite.prepare(text), text === 'commit', storage, appends);
      if (cache.size < 1000) cache.set(text, statement);
    }
    return statement;
  };
  return { prepare, close: () => sqlite.close() } as unknown as SQLite.Database;
}

/** The statement's runs, each failure (and a COMMIT's success) told to the storage condition. */
function watched(
  statement: SQLite.Statement,
  commits: boolean,
  storage: StorageCondition,
  appends: AppendFeed,
): SQLite.Statement {
  const guarded =
    <A extends unknown[], R>(run: (...args: A) => R) =>
    (...args: A): R => {
      try {
        const result = run(...args);
        if (commits) {
          storage.committed();
          appends.committed();
        }
        return result;
      } catch (error) {
        storage.failed(error);
        throw error;
      }
    };
  return {
    reader: statement.reader,
    run: guarded(statement.run.bind(statement)),
    all: guarded(statement.all.bind(statement)),
    get: guarded(statement.get.bind(statement)),
    iterate: guarded(statement.iterate.bind(statement)),
  } as unknown as SQLite.Statement;
}

function openPostgres(url: string, timeouts: DatabaseTimeouts): Database {
  // Kysely asks for the pool at the first query.
  let pool: pg.Pool | undefined;
  // Suspended until the change listener is up: until then every lookup reads the database.
  const authCache = new InvalidatingCache<unknown>(() => 0);
  authCache.suspend();
  const appends = new AppendFeed();
  let listener: AuthListener | undefined;
  let log: CounterStoreLog | undefined;
  const watch = watchCachedTables(authCache);
  const storage = new StorageCondition('postgres');
  const db = new Kysely({
    dialect: new PostgresDialect({
      pool: async () => {
        pool = await postgresPool(url, timeouts);
        return namingPool(pool, await pgDriver(), storage);
      },
    }),
    plugins: [watch],
  }) as Db;
  refuseToPrepare(db, (node) => watch.watches(node));
  const parsed = new URL(url);
  // A server on this host may be reached through its Unix socket: the directory as the host
  // (`postgres://user@%2Fvar%2Frun%2Fpostgresql/db`) or as `?host=` (docs/deployment.md).
  const host = parsed.searchParams.get('host') ?? decodeURIComponent(parsed.host);
  return {
    db,
    engine: 'postgres',
    location: `postgres://${host}${parsed.pathname}`,
    authCache,
    appends,
    storage,
    lockWaitMs: timeouts.statementTimeoutMs > 0 ? lockWaitBound(timeouts.statementTimeoutMs) : 0,
    // txid_current() makes the transaction a writing one: its COMMIT writes a record, and a standby
    // (or a read-only default) refuses it.
    probeWrite: async () => {
      await db.transaction().execute((trx) => sql`select txid_current()`.execute(trx));
    },
    async listenForChanges() {
      listener ??= listenForAuthChanges(
        async () => {
          const pg = await pgDriver();
          return new pg.Client({
            connectionString: url,
            keepAlive: true,
            connectionTimeoutMillis: timeouts.connectTimeoutMs,
            application_name: AUTH_LISTENER_NAME,
          });
        },
        authCache,
        appends,
      );
      if (log) listener.useLog(log);
      await listener.firstAttempt;
    },
    poolUse: () => ({
      total: pool?.totalCount ?? 0,
      idle: pool?.idleCount ?? 0,
      waiting: pool?.waitingCount ?? 0,
      max: pool?.options.max ?? 10,
    }),
    async unbounded(fn) {
      const single = new Kysely({
        dialect: new PostgresDialect({
          pool: () => postgresPool(url, { ...timeouts, statementTimeoutMs: 0 }, 1),
        }),
      }) as Db;
      try {
        return await fn(single);
      } finally {
        await single.destroy();
      }
    },
    useLog(next) {
      log = next;
      listener?.useLog(next);
      storage.useLog(next);
    },
    async close() {
      await listener?.stop();
      await db.destroy();
    },
  };
}

/** The pg driver, loaded by the first PostgreSQL connection (an embedded-engine instance never loads it). */
let driver: Promise<typeof pg> | undefined;

function pgDriver(): Promise<typeof pg> {
  driver ??= import('pg').then(({ default: pg }) => {
    // int8 (COUNT, bigint epoch milliseconds) arrives as a string by default; every value we store fits a double.
    pg.types.setTypeParser(20, (value) => Number(value));
    return pg;
  });
  return driver;
}

async function postgresPool(url: string, timeouts: DatabaseTimeouts, max = 10): Promise<pg.Pool> {
  const pg = await pgDriver();
  const { connectTimeoutMs, statementTimeoutMs } = timeouts;
  const pool = new pg.Pool({
    connectionString: url,
    max,
    // A server that is down refuses at once; one that does not answer (a dropped host) would hold the
    // request for the kernel's TCP timeout. Both waits are bounded, so the caller hears 503 quickly.
    connectionTimeoutMillis: connectTimeoutMs,
    keepAlive: true,
    ...(statementTimeoutMs > 0
      ? {
          // The server cancels a statement that runs too long and keeps the connection; the client's
          // own bound (a little later) covers a server that no longer answers at all. A lock wait
          // ends a little earlier still, so it is answered as one (database_busy).
          statement_timeout: statementTimeoutMs,
          lock_timeout: lockWaitBound(statementTimeoutMs),
          query_timeout: statementTimeoutMs + 1000,
        }
      : {}),
  });
  // An idle connection the server drops (restart, failover, pg_terminate_backend) is emitted here;
  // unhandled, it would crash the process. The pool has already discarded it and reconnects on demand.
  pool.on('error', () => {});
  // The pool listens for errors only while a connection sits idle. One handed out (a query or a
  // transaction in progress) reports the server's 57P01 or a reset socket on its own 'error' event a
  // moment after the failed query, often before Kysely returns it; with no listener that event ends
  // the process. The query itself already failed with the same error (answered 503), and the pool
  // discards the broken connection when it comes back (it is no longer queryable).
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });
  return pool;
}
