import { MS } from '../../clock.ts';
import { isWellFormedToken, newAgentToken, randomId, sha256, tokenDisplayPrefix } from '../../secrets.ts';
import type { InvalidatingCache } from '../../storage/engine/invalidating-cache.ts';
import type { Page, PageRequest } from '../../storage/paging.ts';
import { dayOf, TALLY, tallies, tokenHolders } from '../../storage/rollups.ts';
import type { Executor, TokensTable } from '../../storage/schema.ts';
import { tokens } from '../../storage/tokens.ts';
import { transact, type WritePort } from '../../storage/transactions.ts';
import { isScope, type Scope } from '../access/scopes.ts';
import type { Tiered } from '../access/tiers.ts';
import { appendEvent } from '../eventlog/eventlog.ts';
import type { Clocked } from '../ports.ts';
import type { MemberRef, TokenRef } from './principal.ts';

export type TokenSource = 'device' | 'oauth' | 'console' | 'cli';

export interface MintRequest {
  memberId: string;
  scopes: readonly string[];
  sandbox: boolean;
  name: string;
  source: TokenSource;
}

export interface MintedToken {
  /** Shown once; only its SHA-256 is stored. */
  plaintext: string;
  row: TokensTable;
}

/** Scopes above the member's tier; minting refuses them rather than quietly dropping them. */
export class DeniedScopesError extends Error {
  readonly denied: string[];
  readonly tier: string;

  constructor(denied: string[], tier: string) {
    super(`scopes not granted by tier ${tier}: ${denied.join(', ')}`);
    this.denied = denied;
    this.tier = tier;
  }
}

export async function mintToken(
  deps: WritePort & Clocked & Tiered,
  member: { id: string; tier: string },
  request: Omit<MintRequest, 'memberId'>,
): Promise<MintedToken> {
  const { granted, denied } = deps.tiers.split(member.tier, request.scopes);
  if (denied.length) throw new DeniedScopesError(denied, member.tier);
  const plaintext = newAgentToken();
  const now = deps.clock.now();
  const row: TokensTable = {
    id: randomId('tok', 8),
    member_id: member.id,
    hash: sha256(plaintext),
    prefix: tokenDisplayPrefix(plaintext),
    name: request.name,
    scopes: JSON.stringify([...new Set(granted)]),
    sandbox: request.sandbox ? 1 : 0,
    source: request.source,
    created_at: now,
    last_used_at: null,
    revoked_at: null,
  };
  await transact(deps, async (trx) => {
    await tokens.insert(trx, row);
    const held = await tokenHolders.change(trx, member.id, 1);
    await tallies.add(trx, {
      [request.sandbox ? TALLY.sandbox : TALLY.live]: 1,
      [TALLY.holders]: held === 1 ? 1 : 0,
    });
    await appendEvent(
      trx,
      member.id,
      {
        type: 'token_minted',
        actor: { kind: request.source },
        target: { token_id: row.id, token_prefix: row.prefix },
        payload: {
          name: row.name,
          scopes: JSON.parse(row.scopes),
          sandbox: request.sandbox,
          source: request.source,
        },
        actions: [
          { label: 'See what the token can do', mcp_tool: 'ic_capabilities', args: {}, consequential: false },
        ],
      },
      now,
    );
  });
  return { plaintext, row };
}

export type TokenLookup =
  | { ok: true; token: TokenRef; member: MemberRef }
  | { ok: false; reason: 'malformed' | 'unknown' }
  | { ok: false; reason: 'revoked'; tokenId: string; prefix: string };

type ValidLookup = Extract<TokenLookup, { ok: true }>;

/** The digest a presented token is looked up by; undefined when it is not shaped as a token. */
export function presentedTokenDigest(presented: string): string | undefined {
  return isWellFormedToken(presented) ? sha256(presented) : undefined;
}

/**
 * One indexed read by hash; the plaintext never touches the database or the log. With a cache (the
 * embedded engine), a valid lookup is reused until a write to tokens or members could change it.
 */
export function verifyToken(
  db: Executor,
  presented: string,
  cache?: InvalidatingCache<unknown>,
): TokenLookup | Promise<TokenLookup> {
  const digest = presentedTokenDigest(presented);
  if (digest === undefined) return { ok: false, reason: 'malformed' };
  return verifyTokenDigest(db, digest, cache);
}

/** `verifyToken` for a token whose digest the caller already has (presentedTokenDigest). */
export function verifyTokenDigest(
  db: Executor,
  digest: string,
  cache?: InvalidatingCache<unknown>,
): TokenLookup | Promise<TokenLookup> {
  // A cached lookup is answered at once: no promise, no microtask, on the hottest path there is.
  const cached = cache?.get(digest) as ValidLookup | undefined;
  if (cached) return cached;
  return readToken(db, digest, cache);
}

async function readToken(
  db: Executor,
  hash: string,
  cache?: InvalidatingCache<unknown>,
): Promise<TokenLookup> {
  const snapshot = cache?.snapshot() ?? 0;
  const [row] = await tokens.withMemberByHash(db, hash);
  if (!row) return { ok: false, reason: 'unknown' };
  if (row.revoked_at !== null)
    return { ok: false, reason: 'revoked', tokenId: row.token_id, prefix: row.prefix };
  const lookup: ValidLookup = {
    ok: true,
    token: {
      id: row.token_id,
      prefix: row.prefix,
      scopes: (JSON.parse(row.scopes) as string[]).filter(isScope) as Scope[],
      sandbox: row.sandbox === 1,
      createdAt: Number(row.created_at),
      lastUsedAt: row.last_used_at === null ? null : Number(row.last_used_at),
      signingKey:
        row.signing_key_id && row.signing_key_x ? { id: row.signing_key_id, x: row.signing_key_x } : null,
      signingEnforced: Number(row.signing_enforced) === 1,
    },
    member: { id: row.member_id, name: row.name, email: row.email, tier: row.tier },
  };
  cache?.set(hash, lookup, snapshot);
  return lookup;
}

/** Whether the token's last use is old enough to record again (at most once a minute per token). */
export function isTouchDue(token: TokenRef, now: number): boolean {
  return token.lastUsedAt === null || now - token.lastUsedAt >= MS.minute;
}

/**
 * Recorded at most once a minute per token, so reads do not each cost a write. The write is the one
 * it always was while the last use falls on the same UTC day; the first use of a day also moves the
 * token, in the dashboard's tallies, from the day of its previous use to this one (once a day).
 */
export async function touchToken(
  deps: WritePort & { db: Executor },
  token: TokenRef,
  now: number,
): Promise<void> {
  if (!isTouchDue(token, now)) return;
  // The reference may be a cached lookup: keep it current so the next request does not write again.
  token.lastUsedAt = now;
  const today = dayOf(now);
  if (await tokens.touchSince(deps.db, token.id, now, today * MS.day)) return;
  await transact(deps, async (trx) => {
    const row = await tokens.lastUseForUpdate(trx, token.id);
    if (!row) return;
    await tokens.setLastUsed(trx, token.id, now);
    if (row.revoked_at !== null) return;
    const before = row.last_used_at === null ? undefined : dayOf(Number(row.last_used_at));
    if (before === today) return;
    await tallies.add(trx, {
      [TALLY.lastUsed(today)]: 1,
      ...(before === undefined ? {} : { [TALLY.lastUsed(before)]: -1 }),
    });
  });
}

/** Idempotent: revoking twice reports the first revocation. */
export async function revokeToken(
  deps: WritePort & Clocked,
  tokenId: string,
  revokedBy: Record<string, unknown> = { kind: 'token_holder' },
): Promise<{ prefix: string; alreadyRevoked: boolean } | undefined> {
  const now = deps.clock.now();
  return transact(deps, async (trx) => {
    const revoked = await tokens.revoke(trx, tokenId, now);
    const row = await tokens.ownerOf(trx, tokenId);
    if (!row) return undefined;
    const alreadyRevoked = !revoked;
    if (!alreadyRevoked) {
      const held = await tokenHolders.change(trx, row.member_id, -1);
      await tallies.add(trx, {
        [Number(row.sandbox) !== 0 ? TALLY.sandbox : TALLY.live]: -1,
        [TALLY.revoked]: 1,
        [TALLY.holders]: held === 0 ? -1 : 0,
        ...(row.last_used_at === null ? {} : { [TALLY.lastUsed(dayOf(Number(row.last_used_at)))]: -1 }),
      });
      await appendEvent(
        trx,
        row.member_id,
        { type: 'token_revoked', actor: revokedBy, target: { token_id: tokenId, token_prefix: row.prefix } },
        now,
      );
    }
    return { prefix: row.prefix, alreadyRevoked };
  });
}

/** Every token, or one member's, newest first (the CLI's list). */
export async function listTokens(db: Executor, memberId?: string): Promise<TokensTable[]> {
  return tokens.newestFirst(db, memberId);
}

/** One page of the member's tokens, newest first. */
export function pageTokens(db: Executor, memberId: string, page: PageRequest): Promise<Page<TokensTable>> {
  return tokens.page(db, memberId, page);
}

/** The member's token with this display prefix, or undefined. */
export function tokenByPrefix(
  db: Executor,
  memberId: string,
  prefix: string,
): Promise<TokensTable | undefined> {
  return tokens.byPrefix(db, memberId, prefix);
}

/** Whether the member holds the token with this id. */
export async function holdsToken(db: Executor, memberId: string, tokenId: string): Promise<boolean> {
  return (await tokens.ownerOf(db, tokenId))?.member_id === memberId;
}
