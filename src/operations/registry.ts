import { agentCapabilities } from './agent/capabilities.ts';
import { agentHealth } from './agent/health.ts';
import { setupCheck } from './auth/setup-check.ts';
import { pollSignup } from './auth/signup-poll.ts';
import { startSignup } from './auth/signup-start.ts';
import { revokeOwnToken } from './auth/token-revoke.ts';
import { nextEvents, nextEventsTool } from './events/next.ts';
import { submitFeedback } from './feedback/submit.ts';
import { highlightStatus } from './highlights/status.ts';
import { submitHighlight } from './highlights/submit.ts';
import {
  cancelMyTierRequest,
  getMyMembershipTool,
  getMyTier,
  requestHigherTier,
  requestTierTool,
} from './membership/tier.ts';
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
  // MCP and A2A only (no REST path).
  nextEventsTool,
  getMyMembershipTool,
  requestTierTool,
  agentCapabilities,
  agentHealth,
];

export function checkRegistry(operations: readonly Operation[]): void {
  const seen = new Set<string>();
  for (const op of operations) {
    if (op.path === undefined && !op.mcpTool)
      throw new Error(`operation registry: ${op.id} has neither a REST path nor a tool name`);
    if (op.path === undefined && op.aliases?.length)
      throw new Error(`operation registry: ${op.id} has aliases but no REST path`);
    const routes = op.path === undefined ? [] : [op.path, ...(op.aliases ?? [])];
    for (const key of [op.id, ...routes.map((route) => `${op.method} ${route}`)]) {
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
