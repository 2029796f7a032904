import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { TierLadder } from '../domain/access/tiers.ts';
import type { Mailer } from '../domain/auth/sign-in-mail.ts';
import type { CorpusIndex } from '../domain/research/corpus-index.ts';
import type { Database } from '../storage/database.ts';
import type { WriteBatcher } from '../storage/engine/write-batcher.ts';
import type { Db } from '../storage/schema.ts';
import type { WindowCounterStore } from '../storage/window-counters.ts';

/** Everything the service needs from the outside world, built once by the composition root (src/deps.ts). */
export interface Deps {
  config: Config;
  database: Database;
  db: Db;
  clock: Clock;
  tiers: TierLadder;
  /** Write transactions for hot writes: group commit on the embedded engine (storage/engine/write-batcher.ts). */
  writes: WriteBatcher;
  /** Counters of windows of a minute or less (see storage/window-counters.ts for the choice). */
  windowCounters: WindowCounterStore;
  /** Where research retrieval reads (the database itself, or a per-instance copy on PostgreSQL). */
  corpus: CorpusIndex;
  /** How sign-in links reach people (SMTP, the local dev outbox, or none with single sign-on). */
  mailer: Mailer;
  close(): Promise<void>;
}
