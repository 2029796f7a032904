import type { Deps } from '../deps.ts';

/**
 * A read one instance may reuse for a moment: hot public reads (the upcoming list, the donor wall)
 * hit the database at most once per `ttlMs` per instance and key, and a write made through this
 * instance forgets the entry at once. Concurrent callers share one load.
 */
export class BriefReuse<T> {
  private readonly entries = new WeakMap<Deps['database'], Map<string, { at: number; value: Promise<T> }>>();

  constructor(private readonly ttlMs: number) {}

  get(deps: Deps, key: string, load: () => Promise<T>): Promise<T> {
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

  forget(deps: Deps): void {
    this.entries.delete(deps.database);
  }
}
