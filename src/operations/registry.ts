import { setupCheck } from './auth/setup-check.ts';
import { pollSignup } from './auth/signup-poll.ts';
import { startSignup } from './auth/signup-start.ts';
import { revokeOwnToken } from './auth/token-revoke.ts';
import { nextEvents } from './events/next.ts';
import { submitFeedback } from './feedback/submit.ts';
import { highlightStatus } from './highlights/status.ts';
import { submitHighlight } from './highlights/submit.ts';
import { cancelMyTierRequest, getMyTier, requestHigherTier } from './membership/tier.ts';
import type { Operation } from './types.ts';

/** Every operation of the service, declared once; each surface and document is derived from this list. */
export const OPERATIONS: readonly Operation[] = [
  startSignup,
  pollSignup,
  revokeOwnToken,
  setupCheck,
  submitHighlight,
  highlightStatus,
  submitFeedback,
  getMyTier,
  requestHigherTier,
  cancelMyTierRequest,
  nextEvents,
];

export function checkRegistry(operations: readonly Operation[]): void {
  const seen = new Set<string>();
  for (const op of operations) {
    for (const key of [
      op.id,
      `${op.method} ${op.path}`,
      ...(op.aliases ?? []).map((a) => `${op.method} ${a}`),
    ]) {
      if (seen.has(key)) throw new Error(`operation registry: ${key} is declared twice`);
      seen.add(key);
    }
    if (op.mcpTool) {
      if (seen.has(`tool:${op.mcpTool}`))
        throw new Error(`operation registry: tool ${op.mcpTool} is declared twice`);
      seen.add(`tool:${op.mcpTool}`);
    }
  }
}
