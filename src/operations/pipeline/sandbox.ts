import { apiError } from '../../core/errors.ts';
import type { Principal } from '../../domain/auth/principal.ts';
import { transact, withinRolledBackSavepoint } from '../../storage/transactions.ts';
import type { Operation, OperationContext } from '../types.ts';

/** Whether this call is a sandbox token's and is answered by the sandbox step rather than the handler. */
export function isSandboxCall(op: Operation, principal: Principal): boolean {
  return principal.kind === 'bearer' && principal.token.sandbox && op.sandbox !== 'real';
}

/**
 * A sandbox token's call of a simulated operation runs the operation itself (its lookups, its checks,
 * its quota) inside a transaction that is always rolled back: it is refused exactly where the live
 * call would be (an unknown event, a start in the past), and otherwise answered with a receipt of
 * what would have happened, leaving nothing behind.
 */
export async function sandboxReceipt(op: Operation, context: OperationContext<unknown>): Promise<object> {
  if (op.sandbox === 'denied') {
    throw apiError('sandbox_denied', {
      extra: { tier: (context.principal as Extract<Principal, { kind: 'bearer' }>).member.tier },
    });
  }
  await rehearse(op, context);
  return {
    ok: true,
    sandbox: true,
    simulated: true,
    would_have: { action: op.id, scope: op.scope ?? null, args: context.input },
    note: 'Sandbox token: the call was checked as a live one would be, and nothing was changed.',
  };
}

/**
 * Runs the handler inside a savepoint that is always rolled back: its refusals are the call's, its
 * effects are undone. The transaction around it commits, so the call's commit hook (its activity
 * row) is written in the same write unit rather than in a second one.
 */
async function rehearse(op: Operation, context: OperationContext<unknown>): Promise<void> {
  await transact(context.deps, async (trx) => {
    // Reads go through the rehearsal's transaction too (the embedded engine has one connection).
    await withinRolledBackSavepoint(trx, () =>
      op.handler({ ...context, deps: { ...context.deps, db: trx } }),
    );
  });
}
