import type { Clock } from '../../clock.ts';
import { MS } from '../../clock.ts';
import { randomId, sha256 } from '../../secrets.ts';
import { cacheKeys, type InvalidatingCache } from '../../storage/engine/invalidating-cache.ts';
import type { Executor } from '../../storage/schema.ts';
import { sessions } from '../../storage/sessions.ts';
import type { MemberRef } from './principal.ts';

export const SESSION_COOKIE = '__session';
export const SESSION_TTL_MS = 14 * MS.day;

/** Creates a browser session; the cookie value is returned once and only its hash is stored. */
export async function createSession(db: Executor, clock: Clock, memberId: string): Promise<string> {
  const id = randomId('ses', 32);
  const now = clock.now();
  await sessions.insert(db, {
    id_hash: sha256(id),
    member_id: memberId,
    created_at: now,
    expires_at: now + SESSION_TTL_MS,
    revoked_at: null,
  });
  return id;
}

export interface VerifiedSession {
  member: MemberRef;
  sessionHash: string;
}

interface SessionRow {
  session: VerifiedSession;
  expiresAt: number;
}

/**
 * The signed-in member behind a session cookie, or undefined (unknown, revoked, expired). With a
 * cache (the embedded engine's lookup cache, emptied by any write to sessions, members or tokens) a
 * live session is answered without a read, as exactly as a bearer: a revocation or tier change made
 * through the service counts from the very next request.
 */
export function verifySession(
  db: Executor,
  sessionId: string,
  now: number,
  cache?: InvalidatingCache<unknown>,
): VerifiedSession | undefined | Promise<VerifiedSession | undefined> {
  const digest = sessionDigest(sessionId);
  return digest === undefined ? undefined : verifySessionDigest(db, digest, now, cache);
}

/** The digest a presented session id is looked up by; undefined when it is too long to be one. */
export function sessionDigest(sessionId: string): string | undefined {
  return sessionId.length > 200 ? undefined : sha256(sessionId);
}

const sessionKey = cacheKeys('session:');

/** `verifySession` for a session id whose digest the caller already has (sessionDigest). */
export function verifySessionDigest(
  db: Executor,
  hash: string,
  now: number,
  cache?: InvalidatingCache<unknown>,
): VerifiedSession | undefined | Promise<VerifiedSession | undefined> {
  const key = sessionKey(hash);
  const cached = cache?.get(key) as SessionRow | undefined;
  if (cached) return cached.expiresAt > now ? cached.session : undefined;
  return readSession(db, hash, now, key, cache);
}

async function readSession(
  db: Executor,
  hash: string,
  now: number,
  key: string,
  cache: InvalidatingCache<unknown> | undefined,
): Promise<VerifiedSession | undefined> {
  const snapshot = cache?.snapshot() ?? 0;
  const row = await sessions.withMemberByHash(db, hash);
  if (!row || row.revoked_at !== null || Number(row.expires_at) <= now) return undefined;
  const session = {
    member: { id: row.id, name: row.name, email: row.email, tier: row.tier },
    sessionHash: hash,
  };
  // Refusals are never cached: only a live session, with its end.
  cache?.set(key, { session, expiresAt: Number(row.expires_at) } satisfies SessionRow, snapshot);
  return session;
}

export async function revokeSession(db: Executor, clock: Clock, sessionId: string): Promise<void> {
  await sessions.revoke(db, sha256(sessionId), clock.now());
}
