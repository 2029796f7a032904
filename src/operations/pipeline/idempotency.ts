import { MS } from '../../clock.ts';
import { apiError, isTransientFailure } from '../../core/errors.ts';
import { idempotencyConflicts, idempotencyReplays } from '../../core/metrics.ts';
import { sha256 } from '../../secrets.ts';
import { idempotency } from '../../storage/idempotency.ts';
import type { Executor } from '../../storage/schema.ts';

export const IDEMPOTENCY_WINDOW_MS = 24 * MS.hour;
/** A claim still in flight after this long belongs to a request that died; a retry may take it over. */
const ABANDONED_AFTER_MS = 60 * MS.second;
const KEY_SHAPE = /^[\x21-\x7e]{1,255}$/;

/** Accepts a bare key or an RFC 9651 sf-string ("…"), as the idempotency-key draft defines it. */
export function parseIdempotencyKey(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  let key = raw.trim();
  if (key.length >= 2 && key.startsWith('"') && key.endsWith('"')) key = key.slice(1, -1);
  if (!KEY_SHAPE.test(key)) {
    throw apiError('invalid_idempotency_key');
  }
  return key;
}

/** Key order must not change the fingerprint of the same body. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

export type Claim = { kind: 'owner'; keyHash: string } | { kind: 'replay'; response: StoredResponse };

/** Claims (principal, method, path, key) before the side effect; a second caller replays or is refused. */
export async function claimIdempotencyKey(
  db: Executor,
  scope: { principal: string; method: string; path: string; key: string },
  input: unknown,
  now: number,
): Promise<Claim> {
  const keyHash = sha256(`${scope.principal}\n${scope.method}\n${scope.path}\n${scope.key}`);
  const fingerprint = sha256(canonical(input));
  for (let attempt = 0; attempt < 2; attempt++) {
    const expiresAt = now + IDEMPOTENCY_WINDOW_MS;
    if (await idempotency.claim(db, { keyHash, fingerprint, now, expiresAt }))
      return { kind: 'owner', keyHash };

    const row = await idempotency.find(db, keyHash);
    if (!row) continue;
    const abandoned = now - Number(row.created_at) > ABANDONED_AFTER_MS;
    const stale = Number(row.expires_at) <= now || (row.state === 'in_flight' && abandoned);
    if (stale) {
      await idempotency.removeClaimMadeAt(db, keyHash, row.created_at);
      continue;
    }
    if (row.fingerprint !== fingerprint) {
      throw apiError('idempotency_key_reused');
    }
    // Applied: the first request's transaction committed and its answer is being recorded now, or
    // never was (the process stopped in between; after ABANDONED_AFTER_MS that is what it means).
    if (row.state === 'in_flight' || (row.state === 'applied' && !abandoned)) {
      idempotencyConflicts.inc();
      throw apiError('idempotency_in_flight', {});
    }
    if (row.state === 'applied') {
      idempotencyConflicts.inc();
      throw apiError('idempotency_answer_lost');
    }
    idempotencyReplays.inc();
    return {
      kind: 'replay',
      response: {
        status: row.status!,
        headers: JSON.parse(row.headers ?? '{}'),
        body: JSON.parse(row.body ?? 'null'),
      },
    };
  }
  idempotencyConflicts.inc();
  throw apiError('idempotency_in_flight', { contended: true });
}

/**
 * Written in the operation's own transaction (the pipeline's commit hook): once the effect commits,
 * so does the key's `applied` state, and a retry after a crash before the answer is recorded finds
 * it applied instead of an abandoned claim it would run again.
 */
export async function markIdempotencyApplied(trx: Executor, keyHash: string): Promise<void> {
  await idempotency.markApplied(trx, keyHash);
}

/** Only a successful first result is kept for replay; Location is the one header replayed. */
export async function completeIdempotencyKey(
  db: Executor,
  keyHash: string,
  response: StoredResponse,
): Promise<void> {
  const headers: Record<string, string> = {};
  if (response.headers.location) headers.location = response.headers.location;
  await idempotency.complete(db, keyHash, {
    status: response.status,
    headers: JSON.stringify(headers),
    body: JSON.stringify(response.body),
  });
}

/**
 * After a failure the key is released, so a retry runs the operation again; but a claim already
 * applied (its transaction committed before the failure) is released only for a refusal, which is
 * never replayed: anything else keeps it, so a retry does not apply the operation twice.
 */
export async function releaseIdempotencyKey(db: Executor, keyHash: string, refusal: boolean): Promise<void> {
  await idempotency.release(db, keyHash, !refusal);
}

export interface FaultLog {
  error(details: Record<string, unknown>, message: string): void;
  warn?: (details: Record<string, unknown>, message: string) => void;
}

/**
 * The operation's effect is committed, so its success is the answer even when recording it for
 * replay fails because the database went away just now: the record is retried in the background
 * (every second, for up to 5 minutes) so a retry of the same key replays it once the database is
 * back, instead of finding an abandoned claim and running the operation a second time.
 */
export async function completeOrRetry(
  db: Executor,
  keyHash: string,
  response: StoredResponse,
  log: FaultLog | undefined,
): Promise<void> {
  try {
    await completeIdempotencyKey(db, keyHash, response);
  } catch (error) {
    if (!isTransientFailure(error)) throw error;
    let attempts = 0;
    const retry = () => {
      completeIdempotencyKey(db, keyHash, response).catch((again) => {
        if (++attempts < 300 && isTransientFailure(again)) setTimeout(retry, 1000).unref();
        else log?.error({ err: again }, 'idempotency record lost');
      });
    };
    setTimeout(retry, 1000).unref();
  }
}
