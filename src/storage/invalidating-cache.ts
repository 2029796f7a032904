const MAX_ENTRIES = 10_000;
/** How often another process's commits are looked for (reading data_version takes SQLite's locks). */
export const EXTERNAL_CHECK_MS = 250;

/**
 * Lookups of the embedded engine, kept until anything could have changed them. A write to a watched
 * table through this process (reported by WriteWatchPlugin) empties it at once, so revocations and
 * tier changes made through the service take effect on the very next request. A commit by another
 * process on the same file (the CLI) is noticed through SQLite's data_version within
 * EXTERNAL_CHECK_MS. The token lookup uses it for valid tokens only; refusals are never cached.
 */
export class InvalidatingCache<Entry> {
  private readonly externalVersion: () => number;
  private readonly now: () => number;
  private readonly entries = new Map<string, Entry>();
  private generation = 0;
  private seenVersion: number;
  private checkedAt = 0;

  constructor(externalVersion: () => number, now: () => number = Date.now) {
    this.externalVersion = externalVersion;
    this.now = now;
    this.seenVersion = externalVersion();
  }

  /** Forget everything (a watched write happened). */
  invalidate(): void {
    this.generation++;
    this.entries.clear();
  }

  /** A snapshot to take before a lookup, so a write that lands during it is not cached over. */
  snapshot(): number {
    const now = this.now();
    if (now - this.checkedAt >= EXTERNAL_CHECK_MS) {
      this.checkedAt = now;
      const version = this.externalVersion();
      if (version !== this.seenVersion) {
        this.seenVersion = version;
        this.invalidate();
      }
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
