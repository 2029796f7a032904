// Tells whoever waits on a reader's event log (an MCP subscription) that a record may have been
// appended to it, once its transaction has committed. It carries no record: the waiter reads its
// log after its cursor, so a wake too many costs one read and a wake is never needed for
// correctness of what is read, only for its timeliness. Where the wakes come from is the engine's:
// - PostgreSQL: the appending transaction sends a notification on EVENT_LOG_CHANNEL with the
//   reader's id (storage/event-log.ts), delivered at its commit to every instance's change
//   listener (engine/auth-listener.ts, the one LISTEN connection an instance has). While that
//   listener is down nothing is told; when it is back every waiter is woken.
// - The embedded engine: this process's appends are noted and told at the COMMIT on its one
//   connection; another process's commits (the command line) show in PRAGMA data_version, read
//   every EXTERNAL_CHECK_MS while anyone waits, and wake every waiter.
import type { Executor } from '../schema.ts';
import { EXTERNAL_CHECK_MS } from './invalidating-cache.ts';

/** The channel an appending transaction notifies on PostgreSQL, with the reader's id as payload. */
export const EVENT_LOG_CHANNEL = 'agent_commons_event_log';

type Wake = () => void;

export class AppendFeed {
  private readonly waiters = new Map<string, Set<Wake>>();
  /** Readers whose wakes are due at the next turn (several wakes in one turn become one). */
  private readonly due = new Set<string>();
  private allDue = false;
  private scheduled = false;
  /** The embedded engine's appends not yet committed, by reader. */
  private readonly uncommitted = new Set<string>();
  private readonly externalVersion?: () => number;
  private seenVersion = 0;
  private poll: NodeJS.Timeout | undefined;
  private count = 0;

  /** `externalVersion`: the embedded engine's data_version, read while anyone waits. */
  constructor(externalVersion?: () => number) {
    this.externalVersion = externalVersion;
  }

  /** Calls `wake` after each commit that may have appended to `readerId`'s log; the returned function stops. */
  subscribe(readerId: string, wake: Wake): () => void {
    let set = this.waiters.get(readerId);
    if (!set) {
      set = new Set();
      this.waiters.set(readerId, set);
    }
    set.add(wake);
    this.count++;
    if (this.count === 1) this.startPolling();
    let live = true;
    return () => {
      if (!live) return;
      live = false;
      set.delete(wake);
      if (set.size === 0) this.waiters.delete(readerId);
      this.count--;
      if (this.count === 0) this.stopPolling();
    };
  }

  /** How many wait now (for tests and metrics). */
  get waiting(): number {
    return this.count;
  }

  /** A commit appended to `readerId`'s log (PostgreSQL: its notification arrived). */
  appended(readerId: string): void {
    if (!this.waiters.has(readerId)) return;
    this.due.add(readerId);
    this.schedule();
  }

  /** Something may have been appended to anyone's log (another process's commit, a listener back). */
  appendedAnywhere(): void {
    if (this.count === 0) return;
    this.allDue = true;
    this.schedule();
  }

  /** The embedded engine: this connection's transaction appended to `readerId`'s log. */
  noteUncommitted(readerId: string): void {
    this.uncommitted.add(readerId);
  }

  /** The embedded engine: its connection committed; the appends noted since are told. */
  committed(): void {
    if (this.uncommitted.size === 0) return;
    for (const readerId of this.uncommitted) this.appended(readerId);
    this.uncommitted.clear();
  }

  stop(): void {
    this.stopPolling();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.scheduled = false;
    const wakes: Wake[] = [];
    if (this.allDue) {
      for (const set of this.waiters.values()) wakes.push(...set);
    } else {
      for (const readerId of this.due) wakes.push(...(this.waiters.get(readerId) ?? []));
    }
    this.allDue = false;
    this.due.clear();
    for (const wake of wakes) wake();
  }

  private startPolling(): void {
    const read = this.externalVersion;
    if (!read) return;
    this.seenVersion = read();
    this.poll = setInterval(() => {
      const version = read();
      if (version === this.seenVersion) return;
      this.seenVersion = version;
      this.appendedAnywhere();
    }, EXTERNAL_CHECK_MS);
    this.poll.unref();
  }

  private stopPolling(): void {
    clearInterval(this.poll);
    this.poll = undefined;
  }
}

/**
 * The embedded engine's feed of each database, keyed by its dialect adapter (the database and its
 * transactions share one), so an append inside a transaction finds its database's feed.
 */
const embeddedFeeds = new WeakMap<object, AppendFeed>();

export function registerEmbeddedFeed(adapter: object, feed: AppendFeed): void {
  embeddedFeeds.set(adapter, feed);
}

/** The embedded engine: notes an append inside `trx` for its feed, told at the commit. */
export function noteEmbeddedAppend(trx: Executor, readerId: string): void {
  embeddedFeeds.get(trx.getExecutor().adapter)?.noteUncommitted(readerId);
}
