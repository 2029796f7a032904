import type { Clock } from './clock.ts';
import { systemClock } from './clock.ts';
import type { Config } from './config.ts';
import { createMailer, type Mailer } from './domain/auth/sign-in-mail.ts';
import { loadTierLadder, type TierLadder } from './domain/auth/tiers.ts';
import { type CorpusIndex, openCorpusIndex } from './domain/research/corpus-index.ts';
import {
  DatabaseWindowCounters,
  MemoryWindowCounters,
  RedisWindowCounters,
  type WindowCounterStore,
} from './http/counter-stores.ts';
import { type Database, openDatabase } from './storage/database.ts';
import { migrateToLatest } from './storage/migrations.ts';
import type { Db } from './storage/schema.ts';
import { WriteBatcher } from './storage/write-batcher.ts';

/** Everything the service needs from the outside world, built once (the composition root). */
export interface Deps {
  config: Config;
  database: Database;
  db: Db;
  clock: Clock;
  tiers: TierLadder;
  /** Write transactions for hot writes: group commit on the embedded engine (storage/write-batcher.ts). */
  writes: WriteBatcher;
  /** Counters of windows of a minute or less (see http/counter-stores.ts for the choice). */
  windowCounters: WindowCounterStore;
  /** Where research retrieval reads (the database itself, or a per-instance copy on PostgreSQL). */
  corpus: CorpusIndex;
  /** How sign-in links reach people (SMTP, the local dev outbox, or none with single sign-on). */
  mailer: Mailer;
  close(): Promise<void>;
}

export interface DepsOptions {
  clock?: Clock;
  tiers?: TierLadder;
  /** Skip migrations (the CLI `migrate` command runs them itself). */
  skipMigrations?: boolean;
}

export async function createDeps(config: Config, options: DepsOptions = {}): Promise<Deps> {
  // First: a public deployment that cannot deliver sign-in links refuses to start before it opens anything.
  const mailer = createMailer(config);
  const database = openDatabase(config.databaseUrl, config.databaseTimeouts);
  const windowCounters: WindowCounterStore = config.redisUrl
    ? new RedisWindowCounters(config.redisUrl, config.redisKeyPrefix)
    : database.engine === 'sqlite'
      ? new MemoryWindowCounters()
      : new DatabaseWindowCounters(database.db);
  const corpus = openCorpusIndex(database);
  const deps: Deps = {
    config,
    database,
    db: database.db,
    clock: options.clock ?? systemClock,
    tiers: options.tiers ?? loadTierLadder(config.tiersFile),
    windowCounters,
    writes: new WriteBatcher(database),
    corpus,
    mailer,
    close: async () => {
      corpus.close();
      await windowCounters.close();
      await database.close();
    },
  };
  try {
    if (!options.skipMigrations) await database.unbounded(migrateToLatest);
  } catch (error) {
    await deps.close();
    throw error;
  }
  return deps;
}
