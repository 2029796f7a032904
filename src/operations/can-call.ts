import { type HttpErrorCode, kindOfCode } from '../core/error-catalogue.ts';
import { type ApiError, apiError, type ErrorKind } from '../core/errors.ts';
import type { Scope } from '../domain/access/scopes.ts';
import type { TierLadder } from '../domain/access/tiers.ts';
import type { Principal } from '../domain/auth/principal.ts';
import type { Operation } from './types.ts';

/** Why a caller may not call an operation, decided in one place for the pipeline and the catalogs. */
export type Refusal =
  | { kind: 'session_required' }
  | { kind: 'missing_token'; presented: 'nothing' | 'session' }
  | { kind: 'insufficient_scope'; scope: Scope }
  | { kind: 'tier'; scope: Scope }
  | { kind: 'sandbox' };

/**
 * Whether `principal` may call `op`: undefined when it may, otherwise why not. The pipeline turns
 * the refusal into its answer (authorize step; the sandbox refusal comes after validation); the
 * capability list and tool catalog describe it with the same `error_kind` the call would get.
 */
export function refusalOf(op: Operation, principal: Principal, tiers: TierLadder): Refusal | undefined {
  if (op.credential === 'session' && principal.kind !== 'session') return { kind: 'session_required' };
  if ((op.credential === 'bearer' || op.credential === 'bearer_or_session') && principal.kind === 'anonymous')
    return { kind: 'missing_token', presented: 'nothing' };
  if (op.credential === 'bearer' && principal.kind === 'session')
    return { kind: 'missing_token', presented: 'session' };
  if (op.scope && principal.kind !== 'anonymous' && op.credential !== 'optional_bearer') {
    if (principal.kind === 'bearer' && !principal.token.scopes.includes(op.scope))
      return { kind: 'insufficient_scope', scope: op.scope };
    if (!tiers.grants(principal.member.tier, op.scope)) return { kind: 'tier', scope: op.scope };
  }
  if (principal.kind === 'bearer' && principal.token.sandbox && op.sandbox === 'denied')
    return { kind: 'sandbox' };
  return undefined;
}

/** The code each refusal is answered with (refusalError; the sandbox step for `sandbox`). */
const REFUSAL_CODES = {
  session_required: 'session_required',
  missing_token: 'missing_token',
  insufficient_scope: 'insufficient_scope',
  tier: 'tier_insufficient',
  sandbox: 'sandbox_denied',
} as const satisfies Record<Refusal['kind'], HttpErrorCode>;

/** The error_kind a call refused this way answers with: its code's, as the catalogue declares it. */
export function errorKindOf(refusal: Refusal): ErrorKind {
  return kindOfCode(REFUSAL_CODES[refusal.kind]);
}

/** The answer a refused call gets (the sandbox refusal is answered by the pipeline's sandbox step). */
export function refusalError(
  refusal: Exclude<Refusal, { kind: 'sandbox' }>,
  principal: Principal,
  tiers: TierLadder,
): ApiError {
  const tier = principal.kind === 'anonymous' ? undefined : principal.member.tier;
  switch (refusal.kind) {
    case 'session_required':
      return apiError('session_required');
    case 'missing_token':
      return refusal.presented === 'nothing'
        ? apiError('missing_token', { message: 'Send an agent token as "Authorization: Bearer agt_…".' })
        : apiError('missing_token', {
            message: 'This operation takes an agent token, not a browser session.',
          });
    case 'insufficient_scope':
      return apiError('insufficient_scope', {
        scope: refusal.scope,
        extra: { tier, required_scope: refusal.scope },
      });
    case 'tier':
      return apiError('tier_insufficient', {
        scope: refusal.scope,
        requiredTier: tiers.tierFor(refusal.scope),
        tier,
        extra: { tier, required_scope: refusal.scope, required_tier: tiers.tierFor(refusal.scope) },
      });
  }
}
