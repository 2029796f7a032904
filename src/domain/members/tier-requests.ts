import { apiError } from '../../core/errors.ts';
import { randomId } from '../../secrets.ts';
import { cacheKeys, type InvalidatingCache } from '../../storage/engine/invalidating-cache.ts';
import { members } from '../../storage/members.ts';
import type { Page, PageRequest } from '../../storage/paging.ts';
import type { TierRequestsTable } from '../../storage/schema.ts';
import { tierRequests } from '../../storage/tier-requests.ts';
import { transact, type WritePort } from '../../storage/transactions.ts';
import type { Tiered } from '../access/tiers.ts';
import { appendEvent } from '../eventlog/eventlog.ts';
import type { Clocked, Store } from '../ports.ts';
import { getMember, MemberError, setMemberTier } from './members.ts';

export const TIER_NOTE_MAX = 600;

export interface TierStatus {
  tier: string;
  pending: TierRequestView | null;
  history: TierRequestView[];
}

export interface TierRequestView {
  id: string;
  tier: string;
  note: string | null;
  status: string;
  created_at: string;
  decided_at: string | null;
  granted_tier: string | null;
  reason: string | null;
}

function view(row: TierRequestsTable): TierRequestView {
  return {
    id: row.id,
    tier: row.tier,
    note: row.note,
    status: row.status,
    created_at: new Date(Number(row.created_at)).toISOString(),
    decided_at: row.decided_at === null ? null : new Date(Number(row.decided_at)).toISOString(),
    granted_tier: row.granted_tier,
    reason: row.reason,
  };
}

const tierStatusKey = cacheKeys('tier-status ');

/**
 * The member's tier, pending request and history. With `cache` (the embedded engine's lookups, which
 * a write to members or tier_requests empties at once, and another process's commit within
 * EXTERNAL_CHECK_MS) the answer is kept until one of them changes; callers must not mutate it.
 */
export function tierStatus(
  deps: Store,
  memberId: string,
  cache?: InvalidatingCache<unknown>,
): MemberTierStatus | Promise<MemberTierStatus> {
  const key = tierStatusKey(memberId);
  // A kept status is answered at once, without a promise (the pipeline then answers at once too).
  const kept = cache?.get(key) as MemberTierStatus | undefined;
  if (kept) return kept;
  return readTierStatus(deps, memberId, key, cache);
}

async function readTierStatus(
  deps: Store,
  memberId: string,
  key: string,
  cache?: InvalidatingCache<unknown>,
): Promise<MemberTierStatus> {
  const snapshot = cache?.snapshot();
  const member = await getMember(deps.db, memberId);
  if (!member) throw apiError('unknown_member', { message: 'No such member.' });
  const rows = await tierRequests.ofMember(deps.db, memberId);
  const pending = rows.find((r) => r.status === 'pending');
  const status = {
    tier: member.tier,
    email: member.email,
    name: member.name,
    pending: pending ? view(pending) : null,
    history: rows.filter((r) => r.status !== 'pending').map(view),
  };
  if (cache && snapshot !== undefined) cache.set(key, status, snapshot);
  return status;
}

type MemberTierStatus = TierStatus & { email: string; name: string };

/** Members whose tier lets them review tier requests: each gets `tier_requested`. */
async function reviewers(deps: Store & Tiered): Promise<string[]> {
  const tiers = deps.tiers.names().filter((t) => deps.tiers.grants(t, 'admin:tier_review'));
  return members.idsWithTier(deps.db, tiers);
}

/** A member asks for a higher, self-requestable tier; a pending request is replaced by the new one. */
/** What a tier change needs: reads before its transaction go through `db`, which may be one. */
type TierPort = Store & Clocked & Tiered & WritePort;

export async function requestTier(
  deps: TierPort,
  memberId: string,
  tier: string,
  note?: string,
): Promise<TierRequestView> {
  const member = await getMember(deps.db, memberId);
  if (!member) throw apiError('unknown_member', { message: 'No such member.' });
  const definition = deps.tiers.tiers.find((t) => t.name === tier);
  const refuse = (message: string) =>
    apiError('tier_not_requestable', {
      message,
      extra: {
        current_tier: member.tier,
        requestable: deps.tiers.tiers
          .filter((t) => t.selfRequestable && deps.tiers.isAbove(t.name, member.tier))
          .map((t) => t.name),
      },
    });
  if (!definition) throw refuse(`There is no tier "${tier}".`);
  // A lower (or the same) tier is refused for that, before asking whether it could be requested at all:
  // "public is granted by an operator" would be a wrong answer to a member asking for public.
  if (!deps.tiers.isAbove(tier, member.tier))
    throw refuse(`Tier ${tier} is not above the current tier ${member.tier}.`);
  if (!definition.selfRequestable) throw refuse(`Tier ${tier} is granted by an operator, not requested.`);
  const now = deps.clock.now();
  const row: TierRequestsTable = {
    id: randomId('treq', 8),
    member_id: member.id,
    tier,
    note: note ?? null,
    status: 'pending',
    created_at: now,
    decided_at: null,
    decided_by: null,
    granted_tier: null,
    reason: null,
  };
  const operators = await reviewers(deps);
  await transact(deps, async (trx) => {
    await tierRequests.endPending(trx, member.id, 'superseded', now);
    await tierRequests.add(trx, row);
    for (const operator of operators) {
      await appendEvent(
        trx,
        operator,
        {
          type: 'tier_requested',
          actor: { kind: 'member', member_id: member.id, name: member.name },
          target: { request_id: row.id },
          payload: { from: member.tier, to: tier, note: row.note },
          // The operator tools take these args as a dry run; the operator adds confirm: true to decide.
          actions: (['approve', 'deny'] as const).map((decision) => ({
            label: decision === 'approve' ? 'Approve' : 'Deny',
            mcp_tool: 'ic_admin_tier_request_decide',
            args: { id: row.id, decision },
            consequential: true,
          })),
        },
        now,
      );
    }
  });
  return view(row);
}

/** Clears the member's pending request; a no-op when there is none. */
export async function cancelTierRequest(deps: Store & Clocked, memberId: string): Promise<boolean> {
  return tierRequests.endPending(deps.db, memberId, 'cancelled', deps.clock.now());
}

export function listTierRequests(
  deps: Store,
  status: string,
  page: PageRequest,
): Promise<Page<TierRequestsTable>> {
  return tierRequests.page(deps.db, status, page);
}

export type TierDecision = { decision: 'approve'; tier?: string } | { decision: 'deny'; reason?: string };

/** An operator's answer; approval may grant a different tier than the one asked for. */
export async function decideTierRequest(
  deps: TierPort,
  requestId: string,
  decidedBy: string,
  decision: TierDecision,
): Promise<'done' | 'unknown' | 'not_pending' | 'unknown_tier'> {
  const now = deps.clock.now();
  const request = await tierRequests.byId(deps.db, requestId);
  if (!request) return 'unknown';
  const granted = decision.decision === 'approve' ? (decision.tier ?? request.tier) : null;
  if (granted !== null && !deps.tiers.has(granted)) return 'unknown_tier';
  return transact(deps, async (trx) => {
    const decided = await tierRequests.decidePending(trx, requestId, {
      status: granted ? 'approved' : 'denied',
      decided_at: now,
      decided_by: decidedBy,
      granted_tier: granted,
      reason: decision.decision === 'deny' ? (decision.reason ?? null) : null,
    });
    if (!decided) return 'not_pending';
    if (granted) await setMemberTier(trx, deps.clock, deps.tiers, request.member_id, granted);
    await appendEvent(
      trx,
      request.member_id,
      {
        type: granted ? 'tier_approved' : 'tier_denied',
        actor: { kind: 'operator', name: decidedBy },
        target: { request_id: requestId },
        payload: granted
          ? { requested: request.tier, granted }
          : {
              requested: request.tier,
              reason: decision.decision === 'deny' ? (decision.reason ?? null) : null,
            },
        actions: [
          { label: 'See the membership', mcp_tool: 'ic_get_my_membership', args: {}, consequential: false },
        ],
      },
      now,
    );
    return 'done';
  });
}

/**
 * An operator sets a member's tier directly (not answering a request). Like a decided request, it
 * lands in the member's tier history (a row with status `changed`) and their event log
 * (`tier_changed`), so the member learns why their agent's scopes moved. The caller runs it inside
 * an operator operation, which writes the audit row in the same transaction (`transact` joins it).
 */
export async function changeMemberTier(
  deps: TierPort,
  memberId: string,
  tier: string,
  decidedBy: string,
  reason?: string,
): Promise<'done' | 'unchanged' | string> {
  const member = await getMember(deps.db, memberId);
  if (!member) return `no member ${memberId}`;
  if (!deps.tiers.has(tier)) return `unknown tier "${tier}" (tiers: ${deps.tiers.names().join(', ')})`;
  if (member.tier === tier) return 'unchanged';
  const now = deps.clock.now();
  return transact(deps, async (trx) => {
    try {
      await setMemberTier(trx, deps.clock, deps.tiers, memberId, tier);
    } catch (error) {
      if (error instanceof MemberError) return error.message;
      throw error;
    }
    const id = randomId('treq', 8);
    await tierRequests.add(trx, {
      id,
      member_id: memberId,
      tier,
      note: null,
      status: 'changed',
      created_at: now,
      decided_at: now,
      decided_by: decidedBy,
      granted_tier: tier,
      reason: reason ?? null,
    });
    await appendEvent(
      trx,
      memberId,
      {
        type: 'tier_changed',
        actor: { kind: 'operator', name: decidedBy },
        target: { member_id: memberId },
        payload: { from: member.tier, to: tier, reason: reason ?? null },
        actions: [
          { label: 'See the membership', mcp_tool: 'ic_get_my_membership', args: {}, consequential: false },
        ],
      },
      now,
    );
    return 'done';
  });
}
