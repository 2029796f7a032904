import type { Clock } from './clock.ts';
import { systemClock } from './clock.ts';
import type { Config } from './config.ts';
import { loadTierLadder, type TierLadder } from './domain/access/tiers.ts';
import { createMailer, devOutboxKey, signInDelivery } from './domain/auth/sign-in-mail.ts';
import { openCorpusIndex } from './domain/research/corpus-index.ts';
import type { Deps } from './operations/services.ts';
import { openDatabase } from './storage/database.ts';
import { WriteBatcher } from './storage/engine/write-batcher.ts';
import { migrateToLatest } from './storage/migrations.ts';
import {
  DatabaseWindowCounters,
  type FallbackWindowCounterStore,
  MemoryWindowCounters,
  type WindowCounterStore,
} from './storage/window-counters.ts';

/** Until the domain takes narrow ports only, its files still name the type through here. */
export type { Deps } from './operations/services.ts';

export interface DepsOptions {
  clock?: Clock;
  tiers?: TierLadder;
  /** Skip migrations (the CLI `migrate` command runs them itself). */
  skipMigrations?: boolean;
  /**
   * false: no listener for other processes' changes (PostgreSQL), so the lookup cache stays
   * suspended and every lookup reads the database; for the CLI, which serves no requests.
   */
  listenForChanges?: boolean;
}

export async function createDeps(config: Config, options: DepsOptions = {}): Promise<Deps> {
  // First: a public deployment that cannot deliver sign-in links refuses to start before it opens anything.
  const delivery = signInDelivery(config);
  const database = openDatabase(config.databaseUrl, config.databaseTimeouts);
  const clock = options.clock ?? systemClock;
  // ioredis is loaded only where Redis is configured (docs/deployment.md#memory).
  // Without Redis, or while it is away: memory for the embedded engine's one process, else the
  // database's table, which every instance shares.
  const local = (): FallbackWindowCounterStore =>
    database.engine === 'sqlite'
      ? new MemoryWindowCounters()
      : new DatabaseWindowCounters(database.db, database.engine);
  const windowCounters: WindowCounterStore = config.redisUrl
    ? new (await import('./storage/redis-window-counters.ts')).RedisWindowCounters(
        config.redisUrl,
        config.redisKeyPrefix,
        { fallback: local(), clock },
      )
    : local();
  const corpus = openCorpusIndex(database, { dir: config.research.indexDir });
  const deps: Deps = {
    config,
    database,
    db: database.db,
    clock,
    tiers: options.tiers ?? loadTierLadder(config.tiersFile),
    windowCounters,
    writes: new WriteBatcher(database),
    corpus,
    // Until the migrations have made the settings table that keeps the outbox key.
    mailer: createMailer(config),
    close: async () => {
      corpus.close();
      await windowCounters.close();
      await database.close();
    },
  };
  try {
    if (!options.skipMigrations) {
      await database.unbounded(migrateToLatest);
      // After the migrations: they create the triggers whose notifications keep the cache exact.
      if (options.listenForChanges !== false) await database.listenForChanges?.();
      if (delivery === 'dev-outbox') deps.mailer = createMailer(config, await devOutboxKey(database.db));
    }
  } catch (error) {
    await deps.close();
    throw error;
  }
  return deps;
}
