import { MS } from '../../clock.ts';
import { newDeviceCode, newUserCode, normalizeUserCode, randomId, sha256 } from '../../secrets.ts';
import { deviceGrants } from '../../storage/device-grants.ts';
import type { DeviceGrantsTable } from '../../storage/schema.ts';
import { transact, type WritePort } from '../../storage/transactions.ts';
import type { Tiered } from '../access/tiers.ts';
import { sanitizeText } from '../feedback/sanitize.ts';
import { getMember } from '../members/members.ts';
import type { Clocked, Store } from '../ports.ts';
import { mintConsentedToken } from './consented-token.ts';

export const GRANT_LIFETIME_S = 900;
export const POLL_INTERVAL_S = 5;
/** Polls closer together than the interval by more than this are too fast (clock jitter is forgiven). */
const POLL_JITTER_MS = 500;
const SLOW_DOWN_STEP_S = 5;
const MAX_INTERVAL_S = 60;

// The requester's address and software are shown to the approving member only while the grant is
// pending; whatever ends it (a decision, delivery, expiry) drops them in the same statement, as the
// repository's end, endExpired and decide do.

export interface StartGrant {
  scopes: string[];
  clientName?: string;
  sandbox: boolean;
  ip: string;
  userAgent?: string;
}

export interface StartedGrant {
  deviceCode: string;
  userCode: string;
  expiresIn: number;
  interval: number;
}

export async function startGrant(deps: Store & Clocked, request: StartGrant): Promise<StartedGrant> {
  const now = deps.clock.now();
  const deviceCode = newDeviceCode();
  // Shown to the approving human: no hidden or control characters (PostgreSQL text refuses NUL, too).
  const clientName = request.clientName === undefined ? null : sanitizeText(request.clientName) || null;
  // A user code collision with a live grant is vanishingly rare; retry rather than fail.
  for (let attempt = 0; ; attempt++) {
    const userCode = newUserCode();
    try {
      await deviceGrants.insert(deps.db, {
        id: randomId('grt', 8),
        device_code_hash: sha256(deviceCode),
        user_code_hash: sha256(userCode),
        scopes: JSON.stringify([...new Set(request.scopes)]),
        client_name: clientName,
        sandbox: request.sandbox ? 1 : 0,
        status: 'pending',
        created_at: now,
        expires_at: now + GRANT_LIFETIME_S * MS.second,
        interval_s: POLL_INTERVAL_S,
        last_poll_at: null,
        member_id: null,
        granted_scopes: null,
        denied_scopes: null,
        decided_at: null,
        reason: null,
        token_id: null,
        ip: request.ip,
        user_agent: request.userAgent?.slice(0, 300) ?? null,
        bound_session_hash: null,
      });
      return { deviceCode, userCode, expiresIn: GRANT_LIFETIME_S, interval: POLL_INTERVAL_S };
    } catch (error) {
      if (attempt >= 3) throw error;
      await deviceGrants.deleteExpiredWithUserCode(deps.db, sha256(userCode), now);
    }
  }
}

export type PollOutcome =
  | { kind: 'pending'; interval: number; expiresIn: number }
  | { kind: 'slow_down'; interval: number }
  | {
      kind: 'completed';
      token: string;
      grant: DeviceGrantsTable;
      granted: string[];
      denied: string[];
      tier: string;
      memberName: string;
    }
  | { kind: 'cancelled'; reason: string }
  | { kind: 'gone'; why: 'consumed' | 'cancelled' | 'expired' }
  | { kind: 'unknown' };

/** One poll; delivery of the token (or of the denial) happens exactly once, atomically. */
/** What a poll needs: it may mint the token. */
type Polling = Store & Clocked & Tiered & WritePort;

export async function pollGrant(deps: Polling, deviceCode: string): Promise<PollOutcome> {
  const now = deps.clock.now();
  const grant = await deviceGrants.byDeviceCode(deps.db, sha256(deviceCode));
  if (!grant) return { kind: 'unknown' };
  if (grant.status === 'consumed') return { kind: 'gone', why: 'consumed' };
  if (grant.status === 'cancelled') return { kind: 'gone', why: 'cancelled' };
  if (grant.status === 'expired') return { kind: 'gone', why: 'expired' };
  if (grant.status === 'pending') {
    if (now >= Number(grant.expires_at)) {
      await deviceGrants.end(deps.db, grant.id, 'pending', 'expired');
      return { kind: 'gone', why: 'expired' };
    }
    const last = grant.last_poll_at === null ? null : Number(grant.last_poll_at);
    // The first poll is never throttled; the gap is measured against the fixed base interval so a
    // client that adopts the new interval is not punished again.
    if (last !== null && now - last < POLL_INTERVAL_S * MS.second - POLL_JITTER_MS) {
      const interval = Math.min(MAX_INTERVAL_S, grant.interval_s + SLOW_DOWN_STEP_S);
      await deviceGrants.setInterval(deps.db, grant.id, interval);
      return { kind: 'slow_down', interval };
    }
    await deviceGrants.setLastPoll(deps.db, grant.id, now);
    return {
      kind: 'pending',
      interval: grant.interval_s,
      expiresIn: Math.ceil((Number(grant.expires_at) - now) / MS.second),
    };
  }
  if (grant.status === 'denied') {
    // Its own final state, so that later polls are told it was cancelled, not delivered.
    const claimed = await deviceGrants.end(deps.db, grant.id, 'denied', 'cancelled');
    if (!claimed) return { kind: 'gone', why: 'cancelled' };
    return { kind: 'cancelled', reason: grant.reason ?? 'The member declined the request.' };
  }
  return deliver(deps, grant);
}

async function deliver(deps: Polling, grant: DeviceGrantsTable): Promise<PollOutcome> {
  return transact(deps, async (trx) => {
    const claimed = await deviceGrants.end(trx, grant.id, 'approved', 'consumed');
    if (!claimed) return { kind: 'gone', why: 'consumed' } as const;
    const consented = await mintConsentedToken(deps, trx, grant, {
      name: 'device-flow agent',
      source: 'device',
    });
    if (!consented) return { kind: 'gone', why: 'consumed' } as const;
    const { member, granted, nowDenied, minted } = consented;
    const denied = [...(JSON.parse(grant.denied_scopes ?? '[]') as string[]), ...nowDenied];
    await deviceGrants.setToken(trx, grant.id, minted.row.id);
    return {
      kind: 'completed',
      token: minted.plaintext,
      grant,
      granted,
      denied,
      tier: member.tier,
      memberName: member.name,
    } as const;
  });
}

export type DecisionResult =
  | { ok: true; grant: DeviceGrantsTable; granted: string[]; denied: string[] }
  | { ok: false; reason: 'unknown' | 'expired' | 'decided' | 'no_member' };

export async function findPendingGrant(
  deps: Store,
  userCode: string,
): Promise<DeviceGrantsTable | undefined> {
  return deviceGrants.byUserCode(deps.db, sha256(normalizeUserCode(userCode)));
}

type GrantRefusal = 'unknown' | 'expired' | 'decided' | 'bound_elsewhere';
type GrantFound = { ok: true; grant: DeviceGrantsTable } | { ok: false; reason: GrantRefusal };

/** The grant of this code while it can still be decided, or why it cannot. */
async function undecidedGrant(deps: Store & Clocked, userCode: string): Promise<GrantFound> {
  const grant = await findPendingGrant(deps, userCode);
  if (!grant) return { ok: false, reason: 'unknown' };
  if (grant.status !== 'pending') return { ok: false, reason: 'decided' };
  if (deps.clock.now() >= Number(grant.expires_at)) return { ok: false, reason: 'expired' };
  return { ok: true, grant };
}

/**
 * The pending grant of this code as the session `sessionHash` may review it, binding nothing: the
 * approval page shows it straight from its link, and the decision (a POST) binds it as it decides.
 */
export async function reviewableGrant(
  deps: Store & Clocked,
  userCode: string,
  sessionHash: string,
): Promise<GrantFound> {
  const found = await undecidedGrant(deps, userCode);
  if (found.ok && found.grant.bound_session_hash !== null && found.grant.bound_session_hash !== sessionHash)
    return { ok: false, reason: 'bound_elsewhere' };
  return found;
}

/**
 * Binds a pending code to the browser session that first entered it (auth-lessons 4): a code
 * phished to someone else and entered in their session can no longer be approved from another.
 */
export async function bindGrantToSession(
  deps: Store & Clocked,
  userCode: string,
  sessionHash: string,
): Promise<GrantFound> {
  const found = await undecidedGrant(deps, userCode);
  if (!found.ok) return found;
  const bound = await deviceGrants.bindSession(deps.db, found.grant.id, sessionHash);
  if (bound !== sessionHash) return { ok: false, reason: 'bound_elsewhere' };
  return { ok: true, grant: { ...found.grant, bound_session_hash: sessionHash } };
}

/** The human's yes: scopes above the member's tier are split off into denied_scopes. */
export async function approveGrant(
  deps: Store & Clocked & Tiered,
  userCode: string,
  memberId: string,
): Promise<DecisionResult> {
  return decide(deps, userCode, memberId, 'approved');
}

export async function denyGrant(
  deps: Store & Clocked & Tiered,
  userCode: string,
  memberId: string,
  reason?: string,
): Promise<DecisionResult> {
  return decide(deps, userCode, memberId, 'denied', reason);
}

async function decide(
  deps: Store & Clocked & Tiered,
  userCode: string,
  memberId: string,
  status: 'approved' | 'denied',
  reason?: string,
): Promise<DecisionResult> {
  const now = deps.clock.now();
  const grant = await findPendingGrant(deps, userCode);
  if (!grant) return { ok: false, reason: 'unknown' };
  if (grant.status !== 'pending') return { ok: false, reason: 'decided' };
  if (now >= Number(grant.expires_at)) return { ok: false, reason: 'expired' };
  const member = await getMember(deps.db, memberId);
  if (!member) return { ok: false, reason: 'no_member' };
  const { granted, denied } = deps.tiers.split(member.tier, JSON.parse(grant.scopes) as string[]);
  const updated = await deviceGrants.decide(deps.db, grant.id, 'pending', {
    status,
    memberId: member.id,
    grantedScopes: JSON.stringify(granted),
    deniedScopes: JSON.stringify(denied),
    decidedAt: now,
    reason: status === 'denied' ? (reason ?? 'The member declined the request.') : null,
  });
  if (!updated) return { ok: false, reason: 'decided' };
  return { ok: true, grant, granted, denied };
}

/**
 * Ends the grants whose code expired unused: a device that stops polling would otherwise leave its
 * requester's address and software in the row for good. Run by the scheduler's sweep; the rows stay
 * (a late poll is still told `expired_token`), without what identified the requester.
 */
export async function expireStaleGrants(deps: Store & Clocked): Promise<number> {
  return deviceGrants.endExpired(deps.db, 'pending', 'expired', deps.clock.now());
}
