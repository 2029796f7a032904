import type { OperationContext } from './types.ts';

/** The member a signed-in call acts for: the session's, or the token owner's. */
export function actingMemberId(ctx: OperationContext<unknown>): string {
  if (ctx.principal.kind === 'anonymous') throw new Error('pipeline let an anonymous caller through');
  return ctx.principal.member.id;
}
