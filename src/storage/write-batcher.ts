import { sql, type Transaction } from 'kysely';
import type { Database } from './database.ts';
import type { Schema } from './schema.ts';

export type WriteUnit<T> = (trx: Transaction<Schema>) => Promise<T>;

interface Queued {
  unit: WriteUnit<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

const MAX_BATCH = 256;

/**
 * Runs each write unit in a transaction of its own on PostgreSQL. On the embedded engine, which has
 * one writer anyway, units that arrive together share one transaction (group commit): each runs
 * inside a savepoint, so a unit that throws is rolled back alone and gets its own error, and every
 * caller hears back only after the shared COMMIT, so an acknowledged write is on disk as before. A
 * batch of one unit takes no savepoint.
 *
 * Group commit on PostgreSQL was measured and dropped (docs/benchmarks.md, fifth session of
 * 2026-11-27): batching one member's writes made one member's writes 46–65 % faster and many
 * members' 21–30 % slower, since PostgreSQL already runs concurrent transactions in parallel and
 * flushes their commits together.
 */
export class WriteBatcher {
  private readonly database: Database;
  private readonly queue: Queued[] = [];
  private flushing = false;

  constructor(database: Database) {
    this.database = database;
  }

  run<T>(unit: WriteUnit<T>): Promise<T> {
    if (this.database.engine !== 'sqlite') return this.database.db.transaction().execute(unit);
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
