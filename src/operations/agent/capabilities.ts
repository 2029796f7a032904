import { Type } from '@sinclair/typebox';
import { API_VERSION } from '../api-version.ts';
import { errorKindOf, refusalOf } from '../can-call.ts';
import { strictObject } from '../schemas.ts';
import { defineOperation } from '../types.ts';

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
 * `ic_capabilities` (reference §1: capability lookup has no REST path). The catalog is the tool
 * list of the app serving the call, which the MCP and A2A surfaces put on the call request.
 */
export const agentCapabilities = defineOperation<Record<string, never>, typeof CapabilitiesOutput.static>({
  id: 'agentCapabilities',
  method: 'POST',
  tag: 'agent',
  summary: 'List the tools and which of them this token can call',
  description:
    'Any valid token, no scope. Each tool with its credential, scope and sandbox behaviour; `refused` names the error_kind a call would get (from the token’s scopes and the member’s current tier).',
  mcpTool: 'ic_capabilities',
  credential: 'bearer',
  sandbox: 'real',
  idempotent: false,
  recordsActivity: false,
  inputFrom: 'body',
  input: strictObject({}),
  output: CapabilitiesOutput,
  successStatus: 200,
  errors: [{ status: 401, description: 'Missing, unknown or revoked token' }],
  async handler({ principal, deps, request }) {
    if (!request.operations) throw new Error('the surface did not pass its operation list');
    const catalog = request.operations.flatMap((op) => {
      if (!op.mcpTool) return [];
      const refusal = refusalOf(op, principal, deps.tiers);
      const refused = refusal && errorKindOf(refusal);
      return [
        {
          name: op.mcpTool,
          summary: op.summary,
          credential: op.credential,
          scope: op.scope ?? null,
          sandbox: op.sandbox,
          callable: refused === undefined,
          ...(refused ? { refused } : {}),
        },
      ];
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
