import { createHash, createPublicKey } from 'node:crypto';
import type { Clock } from '../../clock.ts';
import type { Executor } from '../../storage/schema.ts';
import { tokens } from '../../storage/tokens.ts';
import { transact, type WritePort } from '../../storage/transactions.ts';
import { appendEvent, type EventType } from '../eventlog/eventlog.ts';

/**
 * Binding an Ed25519 public key to one agent token (spec 4.4, reference §7). Once a key is bound, a
 * signed call with that token is verified against it (src/operations/pipeline/signature.ts); with
 * enforcement on, an unsigned call is refused, so a leaked bearer alone is useless. One key per
 * token: binding over a bound key is refused (revoke first), so a key is never replaced silently.
 */

/** The public key as a JWK (RFC 8037): the only form registration takes. */
export interface Ed25519Jwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
}

export interface SigningKeyPorts extends WritePort {
  db: Executor;
  clock: Clock;
}

export interface TokenSigning {
  tokenId: string;
  keyId: string | null;
  /** The RFC 7638 JWK thumbprint (base64url SHA-256), shown to the member; the key id carries it too. */
  thumbprint: string | null;
  boundAt: number | null;
  enforced: boolean;
}

export type SigningKeyRefusal = 'token_not_found' | 'invalid_key' | 'key_already_bound' | 'no_signing_key';

/** A refusal the operations answer with a 4xx: which one is `reason`. */
export class SigningKeyError extends Error {
  readonly reason: SigningKeyRefusal;

  constructor(reason: SigningKeyRefusal, message: string) {
    super(message);
    this.reason = reason;
  }
}

const BASE64URL_32_BYTES = /^[A-Za-z0-9_-]{43}$/;

/** RFC 7638: SHA-256 over the required members in lexicographic order, no whitespace. */
export function jwkThumbprint(x: string): string {
  return createHash('sha256').update(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`).digest('base64url');
}

/** The `keyid` a signature names: `kid_` and the thumbprint, so an agent can compute it from its own key. */
export function keyIdOf(x: string): string {
  return `kid_${jwkThumbprint(x)}`;
}

/** Checks that `x` is an Ed25519 public key node:crypto accepts; returns it unchanged. */
export function checkEd25519Jwk(jwk: Ed25519Jwk): string {
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519')
    throw new SigningKeyError(
      'invalid_key',
      'Only Ed25519 keys are accepted: {"kty":"OKP","crv":"Ed25519","x":…}.',
    );
  if (!BASE64URL_32_BYTES.test(jwk.x))
    throw new SigningKeyError(
      'invalid_key',
      'x must be the 32-byte public key in base64url without padding (43 characters).',
    );
  try {
    createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, format: 'jwk' });
  } catch {
    throw new SigningKeyError('invalid_key', 'x is not an Ed25519 public key.');
  }
  return jwk.x;
}

interface TokenRow {
  id: string;
  prefix: string;
  member_id: string;
  revoked_at: number | null;
  signing_key_id?: string | null;
  signing_key_x?: string | null;
  signing_key_bound_at?: number | null;
  signing_enforced?: number;
}

async function liveToken(trx: Executor, memberId: string, tokenId: string): Promise<TokenRow> {
  const row = await tokens.signingState(trx, memberId, tokenId);
  if (!row || row.revoked_at !== null)
    throw new SigningKeyError('token_not_found', `No live token ${tokenId} belongs to this member.`);
  return row as TokenRow;
}

function signingOf(row: TokenRow): TokenSigning {
  const x = row.signing_key_x ?? null;
  return {
    tokenId: row.id,
    keyId: row.signing_key_id ?? null,
    thumbprint: x === null ? null : jwkThumbprint(x),
    boundAt: row.signing_key_bound_at == null ? null : Number(row.signing_key_bound_at),
    enforced: Number(row.signing_enforced ?? 0) === 1,
  };
}

async function logChange(
  trx: Executor,
  row: TokenRow,
  type: EventType,
  actor: Record<string, unknown>,
  payload: Record<string, unknown>,
  now: number,
): Promise<void> {
  await appendEvent(
    trx,
    row.member_id,
    { type, actor, target: { token_id: row.id, token_prefix: row.prefix }, payload },
    now,
  );
}

/** Binds `jwk` to the member's token; refused when the token already has a key (revoke it first). */
export async function bindSigningKey(
  deps: SigningKeyPorts,
  memberId: string,
  tokenId: string,
  jwk: Ed25519Jwk,
  actor: Record<string, unknown>,
): Promise<TokenSigning> {
  const x = checkEd25519Jwk(jwk);
  const keyId = keyIdOf(x);
  const now = deps.clock.now();
  return transact(deps, async (trx) => {
    const row = await liveToken(trx, memberId, tokenId);
    const bound = await tokens.bindSigningKey(trx, tokenId, { id: keyId, x }, now);
    if (!bound)
      throw new SigningKeyError(
        'key_already_bound',
        `Token ${tokenId} already has the key ${row.signing_key_id}; revoke it first (POST /api/agent/keys/revoke).`,
      );
    await logChange(
      trx,
      row,
      'signing_key_registered',
      actor,
      { key_id: keyId, thumbprint: jwkThumbprint(x) },
      now,
    );
    return signingOf({ ...row, signing_key_id: keyId, signing_key_x: x, signing_key_bound_at: now });
  });
}

/**
 * Clears the token's key. Enforcement stays as it was: with it on, the token answers nothing until a
 * new key is bound, so rotating a key never opens a moment in which the bearer alone is enough.
 */
export async function unbindSigningKey(
  deps: SigningKeyPorts,
  memberId: string,
  tokenId: string,
  actor: Record<string, unknown>,
): Promise<{ signing: TokenSigning; revokedKeyId: string | null }> {
  const now = deps.clock.now();
  return transact(deps, async (trx) => {
    const row = await liveToken(trx, memberId, tokenId);
    const revokedKeyId = row.signing_key_id ?? null;
    if (revokedKeyId === null) return { signing: signingOf(row), revokedKeyId };
    await tokens.clearSigningKey(trx, tokenId);
    await logChange(trx, row, 'signing_key_revoked', actor, { key_id: revokedKeyId }, now);
    const cleared = { ...row, signing_key_id: null, signing_key_x: null, signing_key_bound_at: null };
    return { signing: signingOf(cleared), revokedKeyId };
  });
}

/**
 * Sets enforcement (`enforce` given) or flips it (absent). Turning it on needs a bound key: a token
 * enforced with no key could make no call at all, which is what revoking the token is for.
 */
export async function setSigningEnforcement(
  deps: SigningKeyPorts,
  memberId: string,
  tokenId: string,
  enforce: boolean | undefined,
  actor: Record<string, unknown>,
): Promise<TokenSigning> {
  const now = deps.clock.now();
  return transact(deps, async (trx) => {
    const row = await liveToken(trx, memberId, tokenId);
    const current = Number(row.signing_enforced ?? 0) === 1;
    const next = enforce ?? !current;
    if (next && !row.signing_key_id)
      throw new SigningKeyError(
        'no_signing_key',
        `Token ${tokenId} has no signing key: register one (POST /api/agent/keys/register) before enforcing signatures.`,
      );
    if (next !== current) {
      await tokens.setSigningEnforced(trx, tokenId, next);
      await logChange(trx, row, 'signing_enforcement_changed', actor, { enforced: next }, now);
    }
    return signingOf({ ...row, signing_enforced: next ? 1 : 0 });
  });
}

/** Each live token's key and enforcement, for the agent console. */
export async function signingOfTokens(
  db: Executor,
  memberId: string,
  ids?: readonly string[],
): Promise<Map<string, TokenSigning>> {
  const rows = await tokens.signingStates(db, memberId, ids);
  return new Map(rows.map((row) => [row.id, signingOf(row as TokenRow)]));
}
