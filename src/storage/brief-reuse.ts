import type { Clock } from '../clock.ts';
import type { Database } from './database.ts';

/** What a reuse needs: the database it caches for and the clock that ages entries. */
interface ReusePort {
  database: Database;
  clock: Clock;
}

/**
 * A read one instance may reuse for a moment: hot public reads (the upcoming list, the donor wall)
 * hit the database at most once per `ttlMs` per instance and key, and a write made through this
 * instance forgets the entry at once. Concurrent callers share one load.
 */
export class BriefReuse<T> {
  private readonly ttlMs: number;
  private readonly entries = new WeakMap<Database, Map<string, { at: number; value: Promise<T> }>>();

  constructor(ttlMs: number) {
    this.ttlMs = ttlMs;
  }

  get(deps: ReusePort, key: string, load: () => Promise<T>): Promise<T> {
    const now = deps.clock.now();
    let byKey = this.entries.get(deps.database);
    if (!byKey) {
      byKey = new Map();
      this.entries.set(deps.database, byKey);
    }
    const entry = byKey.get(key);
    if (entry && now - entry.at < this.ttlMs && now >= entry.at) return entry.value;
    const value = load();
    byKey.set(key, { at: now, value });
    // A failed load is not kept: the next caller tries again.
    value.catch(() => {
      if (byKey.get(key)?.value === value) byKey.delete(key);
    });
    return value;
  }

  forget(deps: ReusePort): void {
    this.entries.delete(deps.database);
  }
}
