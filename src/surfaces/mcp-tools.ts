import { toolAnnotations } from '../operations/effects.ts';
import type { CallResult } from '../operations/pipeline/answer.ts';
import { toJsonSchema } from '../operations/schemas.ts';
import type { Operation } from '../operations/types.ts';

export type ToolOperation = Operation & { mcpTool: string };

/** A tool as tools/list shows it. */
export interface ToolDescription {
  name: string;
  title: string;
  description: string;
  inputSchema: { type: 'object'; [key: string]: unknown };
  outputSchema?: { type: 'object'; [key: string]: unknown };
  annotations: ReturnType<typeof toolAnnotations>;
}

/** A refusal as a tool result carries it (toolResult below): the Error body with ok:false. */
const FAILURE = {
  type: 'object',
  required: ['ok', 'error'],
  properties: { ok: { const: false }, error: { type: 'string' } },
};

/** What a sandbox token's call of a simulated operation answers (operations/pipeline/sandbox.ts). */
const SANDBOX_RECEIPT = {
  type: 'object',
  required: ['ok', 'sandbox', 'simulated'],
  properties: { ok: { const: true }, sandbox: { const: true }, simulated: { const: true } },
};

/**
 * The result's shape when the registry knows it as an object. Clients validate structuredContent
 * against it whether or not the call failed (the SDK does), so a refusal and a sandbox receipt are
 * among the shapes it allows.
 */
function outputSchemaOf(op: ToolOperation): ToolDescription['outputSchema'] {
  const output = toJsonSchema(op.output);
  if (output.type !== 'object') return undefined;
  const shapes = [output, FAILURE, ...(op.sandbox === 'simulated' ? [SANDBOX_RECEIPT] : [])];
  return { type: 'object', anyOf: shapes };
}

/** Every MCP caller is an agent: the fields only a browser session may leave out are required here. */
function withAgentRequired(
  schema: ToolDescription['inputSchema'],
  op: ToolOperation,
): ToolDescription['inputSchema'] {
  if (!op.agentRequired?.length) return schema;
  const required = (schema.required as string[] | undefined) ?? [];
  return { ...schema, required: [...new Set([...required, ...op.agentRequired])] };
}

export function describeTool(op: ToolOperation): ToolDescription {
  const outputSchema = outputSchemaOf(op);
  return {
    name: op.mcpTool,
    title: op.summary,
    description: op.description ? `${op.summary}. ${op.description}` : `${op.summary}.`,
    inputSchema: withAgentRequired({ ...toJsonSchema(op.input), type: 'object' }, op),
    ...(outputSchema ? { outputSchema } : {}),
    annotations: toolAnnotations(op),
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
