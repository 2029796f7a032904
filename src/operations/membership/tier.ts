import { Type } from '@sinclair/typebox';
import {
  cancelTierRequest,
  requestTier,
  TIER_NOTE_MAX,
  tierStatus,
} from '../../domain/members/tier-requests.ts';
import { strictObject } from '../schemas.ts';
import { defineOperation, type OperationContext } from '../types.ts';

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

function memberOf(ctx: OperationContext<unknown>): string {
  if (ctx.principal.kind !== 'session') throw new Error('pipeline let a non-session caller through');
  return ctx.principal.member.id;
}

const SESSION_ERRORS = [{ status: 401, description: 'No browser session (agent tokens are refused here)' }];

export const getMyTier = defineOperation<Record<string, never>, unknown>({
  id: 'getMyTier',
  method: 'GET',
  path: '/api/tier/me',
  tag: 'membership',
  summary: 'Read the signed-in member’s tier',
  description: 'Browser session only. The current tier, the pending request if any, and past requests.',
  credential: 'session',
  scope: 'membership:read',
  sandbox: 'real',
  idempotent: false,
  inputFrom: 'query',
  input: strictObject({}),
  output: Type.Object({
    ok: Type.Literal(true),
    tier: Type.String(),
    pending: Type.Union([TierRequestView, Type.Null()]),
    history: Type.Array(TierRequestView),
    email: Type.String(),
    display_name: Type.String(),
  }),
  successStatus: 200,
  errors: SESSION_ERRORS,
  async handler(ctx) {
    const status = await tierStatus(ctx.deps, memberOf(ctx));
    return {
      body: {
        ok: true,
        tier: status.tier,
        pending: status.pending,
        history: status.history,
        email: status.email,
        display_name: status.name,
      },
    };
  },
});

const RequestInput = strictObject({
  tier: Type.String({ minLength: 1, maxLength: 40 }),
  note: Type.Optional(Type.String({ maxLength: TIER_NOTE_MAX })),
});

export const requestHigherTier = defineOperation<typeof RequestInput.static, unknown>({
  id: 'requestTier',
  method: 'POST',
  path: '/api/tier/request',
  tag: 'membership',
  summary: 'Ask for a higher tier',
  description:
    'Browser session only. The tier must be self-requestable and above the current one (else 400 with current_tier). Replaces a pending request; operators are told through their event log (tier_requested).',
  credential: 'session',
  scope: 'membership:write',
  sandbox: 'real',
  idempotent: false,
  bodyLimit: 8 * 1024,
  inputFrom: 'body',
  input: RequestInput,
  output: Type.Object({ ok: Type.Literal(true), pending: TierRequestView }),
  successStatus: 200,
  errors: [
    ...SESSION_ERRORS,
    { status: 400, description: 'Unknown tier, not self-requestable, or not higher (carries current_tier)' },
  ],
  async handler(ctx) {
    const pending = await requestTier(ctx.deps, memberOf(ctx), ctx.input.tier, ctx.input.note);
    return { body: { ok: true, pending } };
  },
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
    return { body: { ok: true, was_pending: await cancelTierRequest(ctx.deps, memberOf(ctx)) } };
  },
});
