import type { Clock } from '../clock.ts';
import type { Database } from './database.ts';

/** What a reuse needs: the database it caches for and the clock that ages entries. */
interface ReusePort {
  database: Database;
  clock: Clock;
}

/** One key's load: its promise, and once it has settled, its value. */
interface Entry<T> {
  at: number;
  value: Promise<T>;
  loaded?: { value: T };
}

/**
 * A read one instance may reuse for a moment: hot public reads (the upcoming list, the donor wall)
 * hit the database at most once per `ttlMs` per instance and key, and a write made through this
 * instance forgets the entry at once. Concurrent callers share one load.
 */
export class BriefReuse<T> {
  private readonly ttlMs: number;
  private readonly entries = new WeakMap<Database, Map<string, Entry<T>>>();

  constructor(ttlMs: number) {
    this.ttlMs = ttlMs;
  }

  /**
   * The value itself once its load has settled (a reused read then answers without a promise, and
   * so without a turn of the microtask queue), else the load's promise.
   */
  get(deps: ReusePort, key: string, load: () => Promise<T>): T | Promise<T> {
    const now = deps.clock.now();
    let byKey = this.entries.get(deps.database);
    if (!byKey) {
      byKey = new Map();
      this.entries.set(deps.database, byKey);
    }
    const entry = byKey.get(key);
    if (entry && now - entry.at < this.ttlMs && now >= entry.at)
      return entry.loaded ? entry.loaded.value : entry.value;
    const loading: Entry<T> = { at: now, value: load() };
    byKey.set(key, loading);
    loading.value.then(
      (value) => {
        loading.loaded = { value };
      },
      // A failed load is not kept: the next caller tries again.
      () => {
        if (byKey.get(key) === loading) byKey.delete(key);
      },
    );
    return loading.value;
  }

  forget(deps: ReusePort): void {
    this.entries.delete(deps.database);
  }
}
