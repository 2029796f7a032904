const MAX_ENTRIES = 10_000;

/**
 * Lookups of the embedded engine, kept until anything could have changed them: a write to a watched
 * table through this process (reported by WriteWatchPlugin), or a commit by any other process on the
 * same file (SQLite's data_version). A change therefore takes effect on the very next request, as
 * without a cache. The token lookup uses it for valid tokens only; refusals are never cached.
 */
export class InvalidatingCache<Entry> {
  private readonly entries = new Map<string, Entry>();
  private generation = 0;
  private seenVersion: number;

  constructor(private readonly externalVersion: () => number) {
    this.seenVersion = externalVersion();
  }

  /** Forget everything (a watched write happened). */
  invalidate(): void {
    this.generation++;
    this.entries.clear();
  }

  /** A snapshot to take before a lookup, so a write that lands during it is not cached over. */
  snapshot(): number {
    const version = this.externalVersion();
    if (version !== this.seenVersion) {
      this.seenVersion = version;
      this.invalidate();
    }
    return this.generation;
  }

  get(key: string): Entry | undefined {
    this.snapshot();
    return this.entries.get(key);
  }

  set(key: string, entry: Entry, snapshot: number): void {
    if (snapshot !== this.generation) return;
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(key, entry);
  }
}
