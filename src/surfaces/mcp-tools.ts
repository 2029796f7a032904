import { type TSchema, Type } from '@sinclair/typebox';
import type { Principal } from '../domain/auth/principal.ts';
import type { TierLadder } from '../domain/auth/tiers.ts';
import type { CallResult } from '../http/pipeline.ts';
import { strictObject } from '../operations/schemas.ts';
import type { Operation } from '../operations/types.ts';
import { API_VERSION } from './openapi.ts';

export type ToolOperation = Operation & { mcpTool: string };

/** Like defineOperation, for an operation that is an MCP tool (it keeps the handler typed by its input). */
function defineTool<Input, Output>(op: Operation<Input, Output> & { mcpTool: string }): ToolOperation {
  return op as ToolOperation;
}

/** A tool as tools/list shows it. */
export interface ToolDescription {
  name: string;
  description: string;
  inputSchema: { type: 'object'; [key: string]: unknown };
}

/** Plain JSON Schema for a tool: TypeBox's symbol keys and nested $ids dropped (no $ref resolution on MCP). */
function plainSchema(schema: TSchema): ToolDescription['inputSchema'] {
  return JSON.parse(JSON.stringify(schema), (key, value) => (key === '$id' ? undefined : value));
}

export function describeTool(op: ToolOperation): ToolDescription {
  return {
    name: op.mcpTool,
    description: op.description ? `${op.summary}. ${op.description}` : `${op.summary}.`,
    inputSchema: { ...plainSchema(op.input), type: 'object' },
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

const CapabilitiesOutput = Type.Object({
  ok: Type.Literal(true),
  version: Type.String(),
  token: Type.Object({
    prefix: Type.String(),
    member_id: Type.String(),
    tier: Type.String(),
    scopes: Type.Array(Type.String()),
    sandbox: Type.Boolean(),
  }),
  tools: Type.Array(Type.Unknown()),
  callable: Type.Array(Type.String()),
});

/**
 * The tools of the MCP surface: every registry operation with an `mcpTool`, plus the two tools that
 * have no REST path (reference §1: capability lookup exists only on MCP and A2A). Those two are
 * operations too, so they run through the same pipeline (authentication, rate limits, errors).
 */
export function mcpToolOperations(registry: readonly Operation[]): ToolOperation[] {
  const fromRegistry = registry.filter((op): op is ToolOperation => !!op.mcpTool);
  const health = defineTool({
    id: 'mcpHealth',
    method: 'POST',
    path: '/api/mcp',
    tag: 'mcp',
    summary: 'Check that the service answers',
    description: 'Public. Answers {ok: true, version} with the dated API version.',
    mcpTool: 'ic_health',
    credential: 'public',
    sandbox: 'real',
    idempotent: false,
    inputFrom: 'body',
    input: strictObject({}),
    output: Type.Object({ ok: Type.Literal(true), version: Type.String() }),
    successStatus: 200,
    errors: [],
    handler: async () => ({ body: { ok: true as const, version: API_VERSION } }),
  });
  const tools: ToolOperation[] = [...fromRegistry, health];
  const capabilities = defineTool<Record<string, never>, typeof CapabilitiesOutput.static>({
    id: 'mcpCapabilities',
    method: 'POST',
    path: '/api/mcp',
    tag: 'mcp',
    summary: 'List the tools and which of them this token can call',
    description:
      'Any valid token, no scope. Each tool with its credential, scope and sandbox behaviour; `refused` names the error_kind a call would get (from the token’s scopes and the member’s current tier).',
    mcpTool: 'ic_capabilities',
    credential: 'bearer',
    sandbox: 'real',
    idempotent: false,
    inputFrom: 'body',
    input: strictObject({}),
    output: CapabilitiesOutput,
    successStatus: 200,
    errors: [{ status: 401, description: 'Missing, unknown or revoked token' }],
    async handler({ principal, deps }) {
      if (principal.kind !== 'bearer') throw new Error('pipeline let a non-bearer through');
      const catalog = tools.map((op) => {
        const refused = refusalFor(op, principal, deps.tiers);
        return {
          name: op.mcpTool,
          summary: op.summary,
          credential: op.credential,
          scope: op.scope ?? null,
          sandbox: op.sandbox,
          callable: refused === undefined,
          ...(refused ? { refused } : {}),
        };
      });
      const { token, member } = principal;
      return {
        body: {
          ok: true as const,
          version: API_VERSION,
          token: {
            prefix: token.prefix,
            member_id: member.id,
            tier: member.tier,
            scopes: token.scopes,
            sandbox: token.sandbox,
          },
          tools: catalog,
          callable: catalog.filter((t) => t.callable).map((t) => t.name),
        },
      };
    },
  });
  tools.push(capabilities);
  for (const own of [health, capabilities]) {
    if (fromRegistry.some((op) => op.mcpTool === own.mcpTool))
      throw new Error(`MCP surface: tool ${own.mcpTool} is declared by the registry and by the surface`);
  }
  return tools;
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
