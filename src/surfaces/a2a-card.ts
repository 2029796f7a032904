import type { FastifyInstance } from 'fastify';
import { API_VERSION } from '../operations/api-version.ts';
import { effectTags } from '../operations/effects.ts';
import { toJsonSchema } from '../operations/schemas.ts';
import type { Deps } from '../operations/services.ts';
import type { Operation } from '../operations/types.ts';
import { cardSecurity, securitySchemes, skillSecurity } from './a2a-security.ts';
import { CURRENT_VERSION, LEGACY_VERSION } from './a2a-version.ts';

/**
 * The 0.3 revision the card's top-level 0.3 fields declare (`protocolVersion`, `url`,
 * `preferredTransport`); 1.0 clients read `supportedInterfaces` instead, which lists both versions.
 */
export const A2A_PROTOCOL_VERSION = '0.3.0';
export const A2A_PATH = '/api/a2a';

/** An operation reachable over A2A, i.e. one with a tool name (the capability name). */
export type Capability = Operation & { mcpTool: string };

/** Per registry: every A2A call looks its capability up here, and the registry never changes. */
const capabilitiesByRegistry = new WeakMap<readonly Operation[], readonly Capability[]>();

export function capabilitiesOf(operations: readonly Operation[]): readonly Capability[] {
  let capabilities = capabilitiesByRegistry.get(operations);
  if (!capabilities) {
    capabilities = operations.filter((op): op is Capability => typeof op.mcpTool === 'string');
    capabilitiesByRegistry.set(operations, capabilities);
  }
  return capabilities;
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
    // Both are served at the a2a URL; the A2A-Version header picks one (docs/a2a.md).
    protocol_versions: [CURRENT_VERSION, LEGACY_VERSION],
    surfaces: { rest: base, mcp: `${base}/api/mcp`, a2a: `${base}${A2A_PATH}` },
    auth: {
      scheme: 'bearer',
      header: 'Authorization: Bearer agt_…',
      public_methods: ['agent/info', 'agent/capabilities'],
      note: 'tasks/send, SendMessage and message/send take the agent token wherever the capability needs one; scopes, tier, rate limits and sandbox are those of the REST operation. Tasks are read back with the token that made them.',
      registration: `${base}/.well-known/ai-agent.json`,
    },
    agent_card: `${base}/.well-known/agent-card.json`,
  };
}

/** Whether a skill needs the agent token: what the endpoint enforces for it. */
function needsBearer(op: Capability): boolean {
  return op.credential !== 'public' && op.credential !== 'optional_bearer';
}

/**
 * The A2A AgentCard, one document for both protocol versions (docs/a2a.md): 1.0 clients read
 * `supportedInterfaces` (1.0 first, then 0.3, both at /api/a2a) and `securityRequirements`; 0.3
 * clients read `url`, `preferredTransport`, `protocolVersion` and `security`. Each skill is a registry
 * operation; those that need the agent token say so (with their scope) in both spellings
 * (a2a-security.ts).
 */
export function agentCard(deps: Deps, operations: readonly Operation[]) {
  const base = deps.config.publicUrl;
  const url = `${base}${A2A_PATH}`;
  return {
    name: 'agent-commons',
    description:
      'Act on behalf of a member of this community space. Call a skill with SendMessage (message/send in 0.3): a data part {capability, arguments}, or a text part naming the skill and its JSON arguments; each call is a task you can read back with GetTask.',
    supportedInterfaces: [
      { url, protocolBinding: 'JSONRPC', protocolVersion: CURRENT_VERSION },
      { url, protocolBinding: 'JSONRPC', protocolVersion: LEGACY_VERSION },
    ],
    protocolVersion: A2A_PROTOCOL_VERSION,
    url,
    preferredTransport: 'JSONRPC',
    provider: { organization: 'agent-commons', url: base },
    version: API_VERSION,
    documentationUrl: `${base}/docs`,
    // No streaming and no push: every call completes before its answer (docs/a2a.md).
    capabilities: {
      streaming: false,
      pushNotifications: false,
      extendedAgentCard: false,
      stateTransitionHistory: false,
    },
    supportsAuthenticatedExtendedCard: false,
    defaultInputModes: ['application/json', 'text/plain'],
    defaultOutputModes: ['application/json', 'text/plain'],
    securitySchemes: securitySchemes(base),
    // A token or nothing: public skills take no token; the skills below say which need one.
    ...cardSecurity(),
    skills: capabilitiesOf(operations).map((op) => {
      const scopes = op.scope ? [op.scope] : [];
      return {
        id: op.mcpTool,
        name: op.summary,
        description: op.description ?? op.summary,
        tags: [op.tag, ...scopes, `credential:${op.credential}`, ...effectTags(op)],
        examples: [`${op.mcpTool} {}`],
        inputModes: ['application/json', 'text/plain'],
        outputModes: ['application/json'],
        ...(needsBearer(op) ? skillSecurity(scopes) : {}),
      };
    }),
  };
}

export function registerAgentCard(app: FastifyInstance, deps: Deps, operations: readonly Operation[]): void {
  const card = agentCard(deps, operations);
  // agent.json is the name earlier A2A drafts used; clients of either revision find the same card.
  for (const path of ['/.well-known/agent-card.json', '/.well-known/agent.json']) {
    app.get(path, async () => card);
  }
}
