import { MS } from '../../clock.ts';
import { newDeviceCode, randomId, sha256 } from '../../secrets.ts';
import { oauthAuthorizations } from '../../storage/oauth-authorizations.ts';
import type { OAuthAuthorizationsTable } from '../../storage/schema.ts';
import type { Tiered } from '../access/tiers.ts';
import { getMember } from '../members/members.ts';
import type { Clocked, Store } from '../ports.ts';
import type { OAuthClient } from './oauth-clients.ts';

/** Time for the member to sign in and decide, as the device grant gives. */
export const REQUEST_LIFETIME_MS = 15 * MS.minute;
/** OAuth 2.1 §4.1.2: short-lived; a client exchanges its code at once. */
export const CODE_LIFETIME_MS = MS.minute;
/** Decided and exchanged requests are kept this long after they expire (a replayed code still revokes). */
const KEPT_AFTER_EXPIRY_MS = MS.day;

export interface AuthorizationRequest {
  client: OAuthClient;
  redirectUri: string;
  scopes: string[];
  state?: string;
  codeChallenge: string;
  resource: string;
}

/** Stores a pending request; the secret it returns names it in the consent page's address. */
export async function startAuthorization(
  deps: Store & Clocked,
  request: AuthorizationRequest,
): Promise<string> {
  const now = deps.clock.now();
  const secret = newDeviceCode();
  await oauthAuthorizations.deleteExpiredBefore(deps.db, now - KEPT_AFTER_EXPIRY_MS);
  await oauthAuthorizations.insert(deps.db, {
    id: randomId('oaz', 8),
    request_hash: sha256(secret),
    client_id: request.client.clientId,
    client_name: request.client.clientName,
    redirect_uri: request.redirectUri,
    scopes: JSON.stringify([...new Set(request.scopes)]),
    state: request.state ?? null,
    code_challenge: request.codeChallenge,
    resource: request.resource,
    status: 'pending',
    created_at: now,
    expires_at: now + REQUEST_LIFETIME_MS,
    bound_session_hash: null,
    member_id: null,
    granted_scopes: null,
    sandbox: 0,
    decided_at: null,
    code_hash: null,
    code_expires_at: null,
    token_id: null,
    exchanged_at: null,
  });
  return secret;
}

export type BindResult =
  | { ok: true; authorization: OAuthAuthorizationsTable }
  | { ok: false; reason: 'unknown' | 'expired' | 'decided' | 'bound_elsewhere' };

/**
 * Binds a pending request to the browser session that first opens it while signed in, as a device
 * code is bound (auth-lessons 4): a consent link sent to someone else cannot be decided from their session.
 */
export async function bindAuthorization(
  deps: Store & Clocked,
  secret: string,
  sessionHash: string,
): Promise<BindResult> {
  if (secret.length > 100) return { ok: false, reason: 'unknown' };
  const row = await oauthAuthorizations.byRequestHash(deps.db, sha256(secret));
  if (!row) return { ok: false, reason: 'unknown' };
  if (row.status !== 'pending') return { ok: false, reason: 'decided' };
  if (deps.clock.now() >= Number(row.expires_at)) return { ok: false, reason: 'expired' };
  const bound = await oauthAuthorizations.bindSession(deps.db, row.id, sessionHash);
  if (bound !== sessionHash) return { ok: false, reason: 'bound_elsewhere' };
  return { ok: true, authorization: { ...row, bound_session_hash: sessionHash } };
}

export type DecideResult =
  | { ok: true; authorization: OAuthAuthorizationsTable; code?: string; granted: string[] }
  | { ok: false; reason: 'decided' | 'no_member' };

/**
 * The member's decision on a bound request. Approval splits the scopes by the member's tier (those
 * above it are not granted) and issues the single-use code; denial only records the refusal.
 */
export async function decideAuthorization(
  deps: Store & Clocked & Tiered,
  authorization: OAuthAuthorizationsTable,
  memberId: string,
  decision: { approve: boolean; sandbox: boolean },
): Promise<DecideResult> {
  const member = await getMember(deps.db, memberId);
  if (!member) return { ok: false, reason: 'no_member' };
  const now = deps.clock.now();
  const { granted } = deps.tiers.split(member.tier, JSON.parse(authorization.scopes) as string[]);
  const code = decision.approve ? newDeviceCode() : undefined;
  const updated = await oauthAuthorizations.decide(deps.db, authorization.id, 'pending', {
    status: decision.approve ? 'approved' : 'denied',
    memberId: member.id,
    grantedScopes: JSON.stringify(decision.approve ? granted : []),
    sandbox: decision.sandbox,
    decidedAt: now,
    codeHash: code ? sha256(code) : null,
    codeExpiresAt: code ? now + CODE_LIFETIME_MS : null,
  });
  if (!updated) return { ok: false, reason: 'decided' };
  return { ok: true, authorization, code, granted: decision.approve ? granted : [] };
}
