const MAX_ENTRIES = 10_000;
/** How often another process's commits are looked for (reading data_version takes SQLite's locks). */
export const EXTERNAL_CHECK_MS = 250;

/**
 * Token, session and tier-status lookups, kept until anything could have changed them. A write to a
 * watched table through this process (reported by WriteWatchPlugin) empties it at once, so
 * revocations and tier changes made through the service take effect on the very next request.
 * Another process's commits: on the embedded engine SQLite's data_version reveals them within
 * EXTERNAL_CHECK_MS; on PostgreSQL a notification sent by the tables' triggers empties it
 * (storage/engine/auth-listener.ts), and while that listener is not connected the cache is suspended:
 * every lookup reads the database. The token lookup uses it for valid tokens only; refusals are
 * never cached.
 */
export class InvalidatingCache<Entry> {
  private readonly externalVersion: () => number;
  private readonly now: () => number;
  private readonly entries = new Map<string, Entry>();
  private generation = 0;
  private seenVersion: number;
  private checkedAt = 0;
  private suspended = false;

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

  /** Hold nothing and answer nothing until resume(): no one could tell us of another's writes. */
  suspend(): void {
    this.suspended = true;
    this.invalidate();
  }

  /** Cache again, from empty: whatever was written while suspended was never cached. */
  resume(): void {
    this.suspended = false;
    this.invalidate();
  }

  get active(): boolean {
    return !this.suspended;
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
    if (this.suspended) return undefined;
    this.snapshot();
    return this.entries.get(key);
  }

  set(key: string, entry: Entry, snapshot: number): void {
    if (this.suspended || snapshot !== this.generation) return;
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(key, entry);
  }
}

/**
 * Keys of one kind for the cache: `prefix` then an id, the same string again for the same id as the
 * call before. A member's run of requests then looks up one string whose hash V8 keeps with it; a
 * key built anew is joined and hashed in full on every lookup (about a tenth of a cached session
 * read in process).
 */
export function cacheKeys(prefix: string): (id: string) => string {
  let lastId: string | undefined;
  let lastKey = '';
  return (id) => {
    if (id !== lastId) {
      lastId = id;
      lastKey = prefix + id;
    }
    return lastKey;
  };
}
