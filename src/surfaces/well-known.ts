import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.ts';
import { ALL_SCOPES, SCOPE_CATALOG, STARTER_SCOPE_SETS } from '../domain/auth/scopes.ts';
import { FEEDBACK_CATEGORIES } from '../domain/feedback/feedback.ts';
import { defaultPolicies } from '../http/pipeline.ts';
import { API_VERSION } from '../operations/api-version.ts';
import type { Operation } from '../operations/types.ts';

/** The scope catalog with the lowest tier that grants each scope, from the registry's tier ladder. */
export function scopeCatalog(deps: Deps) {
  return ALL_SCOPES.map((scope) => ({
    scope,
    description: SCOPE_CATALOG[scope],
    tier: deps.tiers.tierFor(scope) ?? null,
  }));
}

export function aiAgentDocument(deps: Deps, operations: readonly Operation[]) {
  const base = deps.config.publicUrl;
  const defaults = defaultPolicies(deps);
  const policies = [
    defaults.anonymous,
    defaults.token,
    ...operations.flatMap((op) => [...(op.rateLimits?.(deps) ?? []), ...(op.quotas?.(deps) ?? [])]),
  ];
  return {
    name: 'agent-commons',
    description:
      'Act on behalf of a member of this community space: events, bookings, directory, research, highlights, feedback.',
    version: API_VERSION,
    api: { base_url: base, openapi: `${base}/openapi.json`, docs: `${base}/docs` },
    auth: {
      schemes: [
        {
          type: 'bearer',
          name: 'agentBearer',
          token_format: 'agt_<base64url of 32 bytes>',
          header: 'Authorization: Bearer agt_…',
          identity_types: ['anonymous'],
          registration: {
            device_code: {
              start: `${base}/api/agent/signup/start`,
              poll: `${base}/api/agent/signup/poll`,
              standard_endpoints: {
                device_authorization: `${base}/oauth/device_authorization`,
                token: `${base}/oauth/token`,
              },
            },
            browser_mint: `${base}/agent-console`,
          },
          self_revoke: `${base}/api/agent/token/revoke`,
          sandbox: 'A token minted with sandbox:true gets real reads and simulated writes.',
        },
        { type: 'cookie', name: '__session', note: 'Browser-session operations refuse bearers.' },
      ],
      scopes: scopeCatalog(deps),
      starter_scope_sets: STARTER_SCOPE_SETS,
      tiers: deps.tiers.tiers.map((t) => ({
        name: t.name,
        adds: t.adds,
        self_requestable: t.selfRequestable,
      })),
    },
    signed_requests: {
      supported: false,
      note: 'RFC 9421 Ed25519 request signing is planned; bearer only for now.',
    },
    rate_limits: policies.map((p) => ({
      name: p.name,
      limit: p.limit,
      window: p.window === 'utc_day' ? 'utc_day' : `${p.window}s`,
      per: p.per,
    })),
    rate_limit_headers: [
      'RateLimit',
      'RateLimit-Policy',
      'RateLimit-Limit',
      'RateLimit-Remaining',
      'RateLimit-Reset',
    ],
    surfaces: { rest: base, mcp: `${base}/api/mcp`, a2a: `${base}/api/a2a` },
    contact: { feedback: `${base}/api/agent/feedback` },
    feedback: {
      url: `${base}/api/agent/feedback`,
      method: 'POST',
      categories: FEEDBACK_CATEGORIES,
      note: 'Report documented-surface mismatches with category broken_url, schema_mismatch, stale_doc, endpoint_404 or other.',
    },
  };
}

/** `/.well-known/mcp.json`: the MCP server, how to authenticate, and its tools, from the registry. */
export function mcpDocument(deps: Deps, operations: readonly Operation[]) {
  const base = deps.config.publicUrl;
  const tools = operations.filter((op) => op.mcpTool);
  return {
    name: 'agent-commons',
    description:
      'MCP server of agent-commons: act on behalf of a member of this community space. Every tool runs the same pipeline as the REST API.',
    version: API_VERSION,
    endpoint: `${base}/api/mcp`,
    transport: 'streamable-http',
    stateless: true,
    accept: 'application/json, text/event-stream',
    auth: {
      type: 'bearer',
      header: 'Authorization: Bearer agt_…',
      protected_resource_metadata: `${base}/.well-known/oauth-protected-resource`,
      registration: `${base}/.well-known/ai-agent.json`,
    },
    tools: tools.map((op) => ({
      name: op.mcpTool,
      description: op.description ? `${op.summary}. ${op.description}` : `${op.summary}.`,
      scope: op.scope ?? null,
      credential: op.credential,
    })),
    public_tools: tools
      .filter((op) => op.credential === 'public' || op.credential === 'optional_bearer')
      .map((op) => op.mcpTool),
    docs: { openapi: `${base}/openapi.json`, reference: `${base}/docs`, llms: `${base}/llms.txt` },
  };
}

/** `/llms.txt`: a short Markdown index for language models (llmstxt.org layout). */
export function llmsText(deps: Deps, operations: readonly Operation[]): string {
  const base = deps.config.publicUrl;
  const tools = operations.filter((op) => op.mcpTool);
  const lines = [
    '# agent-commons',
    '',
    '> REST, MCP and A2A service through which AI agents act on behalf of the members of a community space. One operation registry feeds every surface, so the rules (scopes, tiers, rate limits, sandbox) are the same everywhere.',
    '',
    `API version ${API_VERSION}, served unversioned at ${base}.`,
    '',
    '## Getting a token',
    '',
    `- Device flow: POST ${base}/api/agent/signup/start, show the member the verification URL and code, then poll POST ${base}/api/agent/signup/poll until it returns the agent token (standard endpoints: ${base}/oauth/device_authorization and ${base}/oauth/token).`,
    '- Send it as `Authorization: Bearer agt_…`; a token minted with sandbox:true gets real reads and simulated writes.',
    `- Check it with GET ${base}/api/agent/setup-check.`,
    '',
    '## Documents',
    '',
    `- [OpenAPI](${base}/openapi.json): every REST operation with its schemas`,
    `- [API reference](${base}/docs): the same, as a page`,
    `- [Agent registration](${base}/.well-known/ai-agent.json): auth schemes, scopes, tiers, rate limits`,
    `- [MCP server](${base}/.well-known/mcp.json): Streamable HTTP at ${base}/api/mcp and its tools`,
    `- [A2A agent card](${base}/.well-known/agent-card.json): JSON-RPC at ${base}/api/a2a`,
    `- [Feedback](${base}/api/agent/feedback): POST what is broken or missing`,
    '',
    '## MCP tools and A2A capabilities',
    '',
    ...tools.map(
      (op) => `- \`${op.mcpTool}\`: ${op.summary} (${op.credential}${op.scope ? `, ${op.scope}` : ''})`,
    ),
  ];
  return `${lines.join('\n')}\n`;
}

export function registerWellKnown(app: FastifyInstance, deps: Deps, operations: readonly Operation[]): void {
  const base = deps.config.publicUrl;
  const protectedResource = {
    resource: base,
    authorization_servers: [base],
    scopes_supported: ALL_SCOPES,
    bearer_methods_supported: ['header'],
    resource_name: 'agent-commons',
    resource_documentation: `${base}/docs`,
  };
  const authorizationServer = {
    issuer: base,
    device_authorization_endpoint: `${base}/oauth/device_authorization`,
    token_endpoint: `${base}/oauth/token`,
    grant_types_supported: ['urn:ietf:params:oauth:grant-type:device_code'],
    response_types_supported: [],
    token_endpoint_auth_methods_supported: ['none'],
    scopes_supported: ALL_SCOPES,
    service_documentation: `${base}/docs`,
  };
  const agent = aiAgentDocument(deps, operations);
  app.get('/.well-known/oauth-protected-resource', async () => protectedResource);
  app.get('/.well-known/oauth-authorization-server', async () => authorizationServer);
  app.get('/.well-known/ai-agent.json', async () => agent);
  const mcp = mcpDocument(deps, operations);
  app.get('/.well-known/mcp.json', async () => mcp);
  const llms = llmsText(deps, operations);
  app.get('/llms.txt', async (_request, reply) => reply.type('text/markdown; charset=utf-8').send(llms));
}
