import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.ts';
import { API_VERSION } from '../operations/api-version.ts';
import { toJsonSchema } from '../operations/schemas.ts';
import type { Operation } from '../operations/types.ts';

/**
 * The A2A protocol revision the card declares. 0.3 is the revision whose JSON-RPC binding has
 * `message/send` with `kind`-tagged parts; the A2A SDK client (1.x) talks to it through its
 * legacy-compat transport.
 */
export const A2A_PROTOCOL_VERSION = '0.3.0';
export const A2A_PATH = '/api/a2a';
const BEARER_SCHEME = 'agentBearer';

/** An operation reachable over A2A, i.e. one with a tool name (the capability name). */
export type Capability = Operation & { mcpTool: string };

export function capabilitiesOf(operations: readonly Operation[]): Capability[] {
  return operations.filter((op): op is Capability => typeof op.mcpTool === 'string');
}

/** `agent/capabilities`: one entry per registry operation that has a tool name. */
export function capabilityList(operations: readonly Operation[]) {
  return capabilitiesOf(operations).map((op) => ({
    name: op.mcpTool,
    description: op.description ?? op.summary,
    input_schema: toJsonSchema(op.input),
    scope: op.scope ?? null,
    credential: op.credential,
    sandbox: op.sandbox,
  }));
}

/** `agent/info`: who this agent is and how to reach it. */
export function agentInfo(deps: Deps) {
  const base = deps.config.publicUrl;
  return {
    name: 'agent-commons',
    description:
      'Acts on behalf of a member of this community space. Each capability is a registry operation, with the same rules as its REST path.',
    version: API_VERSION,
    protocol_version: A2A_PROTOCOL_VERSION,
    surfaces: { rest: base, mcp: `${base}/api/mcp`, a2a: `${base}${A2A_PATH}` },
    auth: {
      scheme: 'bearer',
      header: 'Authorization: Bearer agt_…',
      public_methods: ['agent/info', 'agent/capabilities'],
      note: 'tasks/send and message/send take the agent token wherever the capability needs one; scopes, tier, rate limits and sandbox are those of the REST operation.',
      registration: `${base}/.well-known/ai-agent.json`,
    },
    agent_card: `${base}/.well-known/agent-card.json`,
  };
}

/** The A2A AgentCard (auth-lessons item 11: the A2A discovery document, with the bearer described). */
export function agentCard(deps: Deps, operations: readonly Operation[]) {
  const base = deps.config.publicUrl;
  return {
    protocolVersion: A2A_PROTOCOL_VERSION,
    name: 'agent-commons',
    description:
      'Act on behalf of a member of this community space. Call a skill with message/send (a data part {capability, arguments}) or tasks/send {capability, arguments}.',
    url: `${base}${A2A_PATH}`,
    preferredTransport: 'JSONRPC',
    version: API_VERSION,
    documentationUrl: `${base}/docs`,
    capabilities: { streaming: false, pushNotifications: false, stateTransitionHistory: false },
    defaultInputModes: ['application/json'],
    defaultOutputModes: ['application/json'],
    securitySchemes: {
      [BEARER_SCHEME]: {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'agt_<base64url of 32 bytes>',
        description: `Agent token; how to get one is in ${base}/.well-known/ai-agent.json.`,
      },
    },
    security: [{ [BEARER_SCHEME]: [] }],
    supportsAuthenticatedExtendedCard: false,
    skills: capabilitiesOf(operations).map((op) => ({
      id: op.mcpTool,
      name: op.summary,
      description: op.description ?? op.summary,
      tags: [op.tag, ...(op.scope ? [op.scope] : []), `credential:${op.credential}`],
      inputModes: ['application/json'],
      outputModes: ['application/json'],
    })),
  };
}

export function registerAgentCard(app: FastifyInstance, deps: Deps, operations: readonly Operation[]): void {
  const card = agentCard(deps, operations);
  // agent.json is the name earlier A2A drafts used; clients of either revision find the same card.
  for (const path of ['/.well-known/agent-card.json', '/.well-known/agent.json']) {
    app.get(path, async () => card);
  }
}
