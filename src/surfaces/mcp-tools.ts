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
