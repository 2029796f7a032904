import { Type } from '@sinclair/typebox';
import { apiError } from '../../core/errors.ts';
import { viaOf } from '../../domain/auth/principal.ts';
import { cancelBooking } from '../../domain/resources/bookings.ts';
import { strictObject, Via } from '../schemas.ts';
import type { Deps } from '../services.ts';
import type { SignedInPrincipal } from '../types.ts';
import { defineOperation, refusedWith } from '../types.ts';

const Input = strictObject({
  booking_id: Type.String({ minLength: 1, maxLength: 100, description: 'The id book answered with.' }),
});

const Output = Type.Object({
  ok: Type.Boolean(),
  id: Type.String(),
  status: Type.Literal('cancelled'),
  was_already: Type.Boolean({ description: 'True when the booking had been cancelled before this call.' }),
  via: Via,
});

/**
 * Whether the caller cancels as an operator: their tier grants an operator (admin:) scope and, for
 * an agent, its token carries one too (an agent acts as an operator only with an operator scope).
 */
function actsAsOperator(deps: Deps, principal: SignedInPrincipal): boolean {
  const operatorScopes = deps.tiers.scopesOf(principal.member.tier).filter((s) => s.startsWith('admin:'));
  if (principal.kind === 'session') return operatorScopes.length > 0;
  return operatorScopes.some((scope) => principal.token.scopes.includes(scope));
}

export const cancelBookingOperation = defineOperation<typeof Input.static, typeof Output.static>({
  id: 'cancelBooking',
  method: 'POST',
  path: '/api/resources/cancel',
  tag: 'resources',
  summary: 'Cancel a booking (queued or confirmed)',
  description:
    'Cancels a booking: a queued one is never decided, a confirmed one frees its slot, and booking_cancelled arrives in the booking member’s event log. The member who booked may cancel it (from a browser session, or through an agent token of theirs with resources:book); an operator may cancel any booking (a session of an operator tier, or a token of theirs that carries an admin: scope besides resources:book). Another member’s booking is answered 404, as an unknown id is. Repeating the call answers was_already: true and changes nothing; a declined booking answers 409.',
  mcpTool: 'ic_resources_cancel',
  credential: 'bearer_or_session',
  scope: 'resources:book',
  sandbox: 'simulated',
  idempotent: true,
  effect: 'destructive',
  repeatable: true,
  bodyLimit: 8 * 1024,
  inputFrom: 'body',
  input: Input,
  output: Output,
  successStatus: 200,
  errors: [
    { status: 400, description: 'Invalid body' },
    { status: 401, description: 'Missing or invalid credential' },
    { status: 403, description: 'Token lacks resources:book, or the tier no longer grants it' },
    refusedWith(
      ['booking_not_found'],
      'No booking of the caller (or, for an operator, none at all) has the id',
    ),
    refusedWith(['booking_not_cancellable'], 'The booking was declined'),
    { status: 413, description: 'Body larger than 8 KB' },
  ],
  async handler({ input, principal, deps }) {
    const outcome = await cancelBooking(deps, input.booking_id, {
      memberId: principal.member.id,
      operator: actsAsOperator(deps, principal),
    });
    if (outcome.kind === 'not_found') throw apiError('booking_not_found');
    if (outcome.kind === 'not_cancellable')
      throw apiError('booking_not_cancellable', { state: outcome.status });
    return {
      body: {
        ok: true,
        id: input.booking_id,
        status: 'cancelled',
        was_already: outcome.wasAlready,
        via: viaOf(principal),
      },
    };
  },
});
