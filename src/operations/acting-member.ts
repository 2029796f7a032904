import type { OperationContext, SignedInPrincipal } from './types.ts';

/** The member a signed-in call acts for: the session's, or the token owner's. */
export function actingMemberId(ctx: OperationContext<unknown, SignedInPrincipal>): string {
  return ctx.principal.member.id;
}
