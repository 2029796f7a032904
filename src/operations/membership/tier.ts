import { Type } from '@sinclair/typebox';
import {
  cancelTierRequest,
  requestTier,
  TIER_NOTE_MAX,
  tierStatus,
} from '../../domain/members/tier-requests.ts';
import { answerOf } from '../../http/serialized-answers.ts';
import { actingMemberId } from '../acting-member.ts';
import { strictObject } from '../schemas.ts';
import { defineOperation, type OperationContext, type SignedInPrincipal } from '../types.ts';

const TierRequestView = Type.Object({
  id: Type.String(),
  tier: Type.String(),
  note: Type.Union([Type.String(), Type.Null()]),
  status: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  decided_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  granted_tier: Type.Union([Type.String(), Type.Null()]),
  reason: Type.Union([Type.String(), Type.Null()]),
});

const SESSION_ERRORS = [{ status: 401, description: 'No browser session (agent tokens are refused here)' }];
const BEARER_ERRORS = [{ status: 401, description: 'Missing, unknown or revoked token' }];

const MembershipOutput = Type.Object({
  ok: Type.Literal(true),
  tier: Type.String(),
  pending: Type.Union([TierRequestView, Type.Null()]),
  history: Type.Array(TierRequestView),
  email: Type.String(),
  display_name: Type.String(),
});

const MEMBERSHIP_DESCRIPTION = 'The current tier, the pending request if any, and past requests.';

/** The same read and body for GET /api/tier/me and ic_get_my_membership. */
const membership = {
  tag: 'membership',
  summary: 'Read the signed-in member’s tier',
  scope: 'membership:read',
  sandbox: 'real',
  idempotent: false,
  input: strictObject({}),
  output: MembershipOutput,
  successStatus: 200,
  handler(ctx: OperationContext<Record<string, never>, SignedInPrincipal>) {
    // A kept status is answered without a promise (see Operation.handler).
    const status = tierStatus(ctx.deps, actingMemberId(ctx), ctx.deps.database.authCache);
    return status instanceof Promise ? status.then(membershipAnswer) : membershipAnswer(status);
  },
} as const;

/** A kept status is the same object until it changes, so its answer is serialized once (answerOf). */
function membershipAnswer(status: Awaited<ReturnType<typeof tierStatus>>) {
  return answerOf(status, () => ({
    ok: true as const,
    tier: status.tier,
    pending: status.pending,
    history: status.history,
    email: status.email,
    display_name: status.name,
  }));
}

export const getMyTier = defineOperation<Record<string, never>, typeof MembershipOutput.static>({
  ...membership,
  id: 'getMyTier',
  method: 'GET',
  path: '/api/tier/me',
  description: `Browser session only (agents use the MCP verb ic_get_my_membership). ${MEMBERSHIP_DESCRIPTION}`,
  credential: 'session',
  inputFrom: 'query',
  errors: SESSION_ERRORS,
});

export const getMyMembershipTool = defineOperation<Record<string, never>, typeof MembershipOutput.static>({
  ...membership,
  id: 'agentGetMyMembership',
  method: 'POST',
  summary: 'Read the token owner’s tier',
  description: `Agent bearer; the same body as GET /api/tier/me. ${MEMBERSHIP_DESCRIPTION}`,
  mcpTool: 'ic_get_my_membership',
  credential: 'bearer',
  inputFrom: 'body',
  errors: BEARER_ERRORS,
});

const RequestInput = strictObject({
  tier: Type.String({ minLength: 1, maxLength: 40 }),
  note: Type.Optional(Type.String({ maxLength: TIER_NOTE_MAX })),
});

const REQUEST_DESCRIPTION =
  'The tier must be self-requestable and above the current one (else 400 with current_tier). Replaces a pending request; operators are told through their event log (tier_requested).';
const REQUEST_REFUSED = {
  status: 400,
  description: 'Unknown tier, not self-requestable, or not higher (carries current_tier)',
};

/** The same request for POST /api/tier/request and ic_request_tier. */
const tierRequest = {
  tag: 'membership',
  summary: 'Ask for a higher tier',
  scope: 'membership:write',
  idempotent: false,
  bodyLimit: 8 * 1024,
  inputFrom: 'body',
  input: RequestInput,
  output: Type.Object({ ok: Type.Literal(true), pending: TierRequestView }),
  successStatus: 200,
  async handler(ctx: OperationContext<typeof RequestInput.static, SignedInPrincipal>) {
    const pending = await requestTier(ctx.deps, actingMemberId(ctx), ctx.input.tier, ctx.input.note);
    return { body: { ok: true as const, pending } };
  },
} as const;

export const requestHigherTier = defineOperation<typeof RequestInput.static, unknown>({
  ...tierRequest,
  id: 'requestTier',
  method: 'POST',
  path: '/api/tier/request',
  description: `Browser session only (agents use the MCP verb ic_request_tier). ${REQUEST_DESCRIPTION}`,
  credential: 'session',
  sandbox: 'real',
  errors: [...SESSION_ERRORS, REQUEST_REFUSED],
});

export const requestTierTool = defineOperation<typeof RequestInput.static, unknown>({
  ...tierRequest,
  id: 'agentRequestTier',
  method: 'POST',
  description: `Agent bearer; the same request as POST /api/tier/request. ${REQUEST_DESCRIPTION} Sandbox tokens get a simulated receipt.`,
  mcpTool: 'ic_request_tier',
  credential: 'bearer',
  sandbox: 'simulated',
  errors: [...BEARER_ERRORS, REQUEST_REFUSED],
});

export const cancelMyTierRequest = defineOperation<Record<string, never>, unknown>({
  id: 'cancelTierRequest',
  method: 'DELETE',
  path: '/api/tier/request',
  tag: 'membership',
  summary: 'Withdraw the pending tier request',
  description: 'Browser session only. A no-op when nothing is pending (was_pending false).',
  credential: 'session',
  scope: 'membership:write',
  sandbox: 'real',
  idempotent: false,
  inputFrom: 'body',
  input: strictObject({}),
  output: Type.Object({ ok: Type.Literal(true), was_pending: Type.Boolean() }),
  successStatus: 200,
  errors: SESSION_ERRORS,
  async handler(ctx) {
    return { body: { ok: true, was_pending: await cancelTierRequest(ctx.deps, actingMemberId(ctx)) } };
  },
});
