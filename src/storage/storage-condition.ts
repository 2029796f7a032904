import { isStorageUnwritable } from './sqlstates.ts';
import type { CounterStoreLog } from './window-counters.ts';

/** Why the database cannot write, since when: what /readyz and the log line say. */
export interface Unwritable {
  code: string;
  message: string;
  since: number;
}

/**
 * Whether the database can store writes now. Every statement's failure passes by `failed` (the
 * engine's connection wrapper in database.ts), every committed transaction by `committed`: the first
 * failure saying the storage refuses writes (a full disk, an I/O error, read-only storage) marks it
 * unwritable, the next commit clears it, and each of the two changes is one log line, however many
 * requests fail in between (they are answered 503 and log nothing of their own).
 */
export class StorageCondition {
  private current: Unwritable | undefined;
  private log: CounterStoreLog | undefined;
  private readonly engine: string;

  constructor(engine: string) {
    this.engine = engine;
  }

  useLog(log: CounterStoreLog): void {
    this.log = log;
  }

  /** Set while the database cannot write. */
  get unwritable(): Unwritable | undefined {
    return this.current;
  }

  failed(error: unknown): void {
    if (this.current || !isStorageUnwritable(error)) return;
    const { code, message } = error as { code: string; message?: string };
    this.current = { code, message: message ?? code, since: Date.now() };
    this.log?.warn(
      { code, cause: message },
      `${this.engine} cannot write: answering writes 503 and /readyz 503 until a write succeeds`,
    );
  }

  committed(): void {
    if (!this.current) return;
    const { code, since } = this.current;
    this.current = undefined;
    this.log?.warn({ code, lasted_ms: Date.now() - since }, `${this.engine} writes again`);
  }
}
