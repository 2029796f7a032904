import type { Deps } from '../deps.ts';
import { gzipOnce } from '../http/compression.ts';

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

interface Answer<Body> {
  body: Body;
  json: string;
  bytes: Buffer;
  /** Gzipped once, the first time a client accepts it (large answers only). */
  gzipped?: () => Buffer;
}

const serialized = new WeakMap<object, Answer<unknown>>();

/**
 * The answer built from a reused read, serialized once: while `source` (an object BriefReuse hands
 * out again and again) lives, every request gets the same body, JSON text and bytes (plain, gzipped).
 */
export function answerOf<Body>(source: object, build: () => Body): Answer<Body> {
  let answer = serialized.get(source) as Answer<Body> | undefined;
  if (!answer) {
    const body = build();
    const json = JSON.stringify(body);
    const bytes = Buffer.from(json);
    answer = { body, json, bytes, gzipped: gzipOnce(bytes) };
    serialized.set(source, answer);
  }
  return answer;
}
