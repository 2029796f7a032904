import { sql, type Transaction } from 'kysely';
import type { Database } from './database.ts';
import type { Schema } from './schema.ts';
import { DEFERRED_WRITE } from './statement-groups.ts';

export type WriteUnit<T> = (trx: Transaction<Schema>) => Promise<T>;

interface Queued {
  unit: WriteUnit<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

const MAX_BATCH = 256;

/**
 * The PostgreSQL advisory lock every batch takes first (transaction-scoped, per database): batches
 * of all instances take turns, as the embedded engine's single writer makes them, so two batches
 * never hold row locks in opposite orders and wait on each other until deadlock detection (1 s).
 */
export const WRITE_BATCH_LOCK = 0x61632d77; // "ac-w"

/**
 * Units that arrive together share one transaction (group commit): each runs inside a savepoint, so
 * a unit that throws is rolled back alone and gets its own error, and every caller hears back only
 * after the shared COMMIT, so an acknowledged write is on disk. One batch is in flight per process;
 * units queue behind it and go together in the next. A batch of one unit needs no savepoint.
 *
 * The same on both engines. On PostgreSQL a batch first takes WRITE_BATCH_LOCK, so the batches of
 * several instances take turns on the database as they do within one process; that lock travels
 * with the batch's first statement (a deferred write), so it costs no round trip of its own.
 */
export class WriteBatcher {
  private readonly database: Database;
  private readonly queue: Queued[] = [];
  private flushing = false;

  constructor(database: Database) {
    this.database = database;
  }

  run<T>(unit: WriteUnit<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ unit, resolve: resolve as (value: unknown) => void, reject });
      if (!this.flushing) {
        this.flushing = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, MAX_BATCH);
      const settled: (() => void)[] = [];
      try {
        await this.database.db.transaction().execute(async (trx) => {
          if (this.database.engine === 'postgres')
            await sql`${sql.raw(DEFERRED_WRITE)}select pg_advisory_xact_lock(${WRITE_BATCH_LOCK})`.execute(
              trx,
            );
          if (batch.length === 1) {
            const [item] = batch;
            const value = await item.unit(trx);
            settled.push(() => item.resolve(value));
            return;
          }
          for (const item of batch) {
            await sql`savepoint write_unit`.execute(trx);
            try {
              const value = await item.unit(trx);
              await sql`release write_unit`.execute(trx);
              settled.push(() => item.resolve(value));
            } catch (error) {
              await sql`rollback to write_unit`.execute(trx);
              await sql`release write_unit`.execute(trx);
              settled.push(() => item.reject(error));
            }
          }
        });
        for (const settle of settled) settle();
      } catch (error) {
        for (const item of batch) item.reject(error);
      }
    }
    this.flushing = false;
  }
}
