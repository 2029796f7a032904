import type { Principal } from '../domain/auth/principal.ts';
import type { TierLadder } from '../domain/auth/tiers.ts';
import type { CallResult } from '../http/pipeline.ts';
import { toJsonSchema } from '../operations/schemas.ts';
import type { Operation } from '../operations/types.ts';

export type ToolOperation = Operation & { mcpTool: string };

/** A tool as tools/list shows it. */
export interface ToolDescription {
  name: string;
  description: string;
  inputSchema: { type: 'object'; [key: string]: unknown };
}

export function describeTool(op: ToolOperation): ToolDescription {
  return {
    name: op.mcpTool,
    description: op.description ? `${op.summary}. ${op.description}` : `${op.summary}.`,
    inputSchema: { ...toJsonSchema(op.input), type: 'object' },
  };
}

/**
 * Why this bearer cannot call the operation, as the pipeline's error_kind would say it, or undefined
 * when it can. It describes the pipeline's authorize step for the catalog; the pipeline still decides.
 */
export function refusalFor(op: Operation, principal: Principal, tiers: TierLadder): string | undefined {
  if (principal.kind !== 'bearer') {
    return op.credential === 'public' || op.credential === 'optional_bearer' ? undefined : 'unauthorized';
  }
  if (op.credential === 'session') return 'unauthorized';
  const scopeMatters = op.scope !== undefined && op.credential !== 'optional_bearer';
  if (scopeMatters && !principal.token.scopes.includes(op.scope!)) return 'insufficient_scope';
  if (scopeMatters && !tiers.grants(principal.member.tier, op.scope!)) return 'tier';
  if (principal.token.sandbox && op.sandbox === 'denied') return 'sandbox';
  return undefined;
}

/** The tools of the MCP surface: every registry operation with an `mcpTool`, with or without a REST path. */
export function mcpToolOperations(registry: readonly Operation[]): ToolOperation[] {
  return registry.filter((op): op is ToolOperation => !!op.mcpTool);
}

/** A pipeline result as an MCP tool result: failures are in-band `{ok:false, error, error_kind}` (reference §5). */
export function toolResult(result: CallResult) {
  const body = (result.body ?? {}) as Record<string, unknown>;
  if (result.status < 400) {
    return { content: [{ type: 'text' as const, text: JSON.stringify(body) }], structuredContent: body };
  }
  const failure = { ok: false, ...body };
  return {
    isError: true,
    content: [{ type: 'text' as const, text: JSON.stringify(failure) }],
    structuredContent: failure,
  };
}
