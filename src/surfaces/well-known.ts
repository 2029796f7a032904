import type { FastifyInstance } from 'fastify';
import { ALL_SCOPES, SCOPE_CATALOG, SCOPE_RISK, STARTER_SCOPE_SETS } from '../domain/access/scopes.ts';
import { FEEDBACK_CATEGORIES } from '../domain/feedback/feedback.ts';
import { protectedResourceMetadataUrl } from '../http/bearer-challenge.ts';
import { API_VERSION } from '../operations/api-version.ts';
import { defaultPolicies } from '../operations/pipeline/charge.ts';
import type { Deps } from '../operations/services.ts';
import { isRestOperation, type Operation, type RestOperation } from '../operations/types.ts';
import { MODERN_PROTOCOL_VERSIONS } from './mcp-envelope.ts';
import { mcpCurlExample } from './mcp-example.ts';
import {
  MCP_DESCRIPTION,
  mcpRemote,
  mcpServerName,
  registerMcpServerCard,
  SERVER_CARD_PATH,
} from './mcp-server-card.ts';
import { mcpToolOperations } from './mcp-tools.ts';
import { registerOAuthMetadata } from './oauth-metadata.ts';
import { signedRequestsProfile } from './signing-profile.ts';

/** The scope catalog with the lowest tier that grants each scope, from the registry's tier ladder. */
export function scopeCatalog(deps: Deps) {
  return ALL_SCOPES.map((scope) => ({
    scope,
    description: SCOPE_CATALOG[scope],
    risk: SCOPE_RISK[scope],
    tier: deps.tiers.tierFor(scope) ?? null,
  }));
}

export function aiAgentDocument(deps: Deps, operations: readonly Operation[]) {
  const base = deps.config.publicUrl;
  const [start, poll, revoke, feedback] = ['startSignup', 'pollSignup', 'revokeToken', 'submitFeedback'].map(
    (id) => operationById(operations, id),
  );
  const endpoint = (op: RestOperation) => ({ method: op.method, url: `${base}${op.path}` });
  const defaults = defaultPolicies(deps);
  // Several operations share a policy (operator_mutations, say): each is listed once.
  const policies = [
    ...new Map(
      [
        defaults.anonymous,
        defaults.token,
        ...operations.flatMap((op) => [...(op.rateLimits?.(deps) ?? []), ...(op.quotas?.(deps) ?? [])]),
      ].map((policy) => [policy.name, policy]),
    ).values(),
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
              start: `${base}${start.path}`,
              poll: `${base}${poll.path}`,
              start_request: endpoint(start),
              poll_request: { ...endpoint(poll), query: 'device_code', respect: 'interval, and slow_down' },
              standard_endpoints: {
                device_authorization: `${base}/oauth/device_authorization`,
                token: `${base}/oauth/token`,
              },
            },
            authorization_code: {
              note: "OAuth 2.1 with PKCE S256, for MCP hosts: the client_id is the URL of the host's client ID metadata document (or one from register), send the member to authorize, exchange the code.",
              client_id_metadata_document_supported: true,
              metadata: `${base}/.well-known/oauth-authorization-server`,
              register: `${base}/oauth/register`,
              authorize: `${base}/oauth/authorize`,
              token: `${base}/oauth/token`,
            },
            browser_mint: `${base}/agent-console`,
          },
          self_revoke: `${base}${revoke.path}`,
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
    signed_requests: signedRequestsProfile(base),
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
    contact: { feedback: `${base}${feedback.path}` },
    feedback: {
      url: `${base}${feedback.path}`,
      method: feedback.method,
      categories: FEEDBACK_CATEGORIES,
      note: 'Report documented-surface mismatches with category broken_url, schema_mismatch, stale_doc, endpoint_404 or other.',
    },
  };
}

/** The MCP registry's server.json schema this document follows (test/fixtures/mcp-registry/). */
export const SERVER_JSON_SCHEMA =
  'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json';

/** The one `_meta` key the MCP registry keeps when a server.json is published (at most 4 KB of JSON). */
export const PUBLISHER_META = 'io.modelcontextprotocol.registry/publisher-provided';

/**
 * `/.well-known/mcp.json`: a server.json as the MCP registry defines it (name, description of at most
 * 100 characters, version, the remote with its optional bearer header). Everything else (how to
 * authenticate, the tools by name, the documents) is under `_meta`, in the one key the registry keeps.
 */
export function mcpDocument(deps: Deps, operations: readonly Operation[]) {
  const base = deps.config.publicUrl;
  const tools = mcpToolOperations(operations);
  return {
    $schema: SERVER_JSON_SCHEMA,
    name: mcpServerName(base),
    title: 'agent-commons',
    description: MCP_DESCRIPTION,
    version: API_VERSION,
    websiteUrl: base,
    remotes: [mcpRemote(base)],
    _meta: {
      [PUBLISHER_META]: {
        stateless: true,
        auth: {
          protected_resource_metadata: protectedResourceMetadataUrl(base, 'mcp'),
          authorization_server: `${base}/.well-known/oauth-authorization-server`,
          registration: `${base}/.well-known/ai-agent.json`,
        },
        server_card: `${base}${SERVER_CARD_PATH}`,
        tools: tools.map((op) => op.mcpTool),
        public_tools: tools
          .filter((op) => op.credential === 'public' || op.credential === 'optional_bearer')
          .map((op) => op.mcpTool),
        docs: { openapi: `${base}/openapi.json`, reference: `${base}/docs`, llms: `${base}/llms.txt` },
      },
    },
  };
}

function operationById(operations: readonly Operation[], id: string): RestOperation {
  const op = operations.find((candidate) => candidate.id === id);
  if (!op || !isRestOperation(op)) throw new Error(`llms.txt needs the REST operation ${id}`);
  return op;
}

const CREDENTIALS: Record<Operation['credential'], string> = {
  public: 'public',
  optional_bearer: 'public; a bearer is charged instead of the IP',
  bearer: 'bearer',
  session: 'browser session',
  bearer_or_session: 'bearer or browser session',
};

/**
 * `/llms.txt`: a short Markdown index for language models (llmstxt.org layout). Every request it
 * describes names its method and comes from the registry (the token flow from the signup operations
 * themselves), and `test/discovery.test.ts` sends each one.
 */
export function llmsText(deps: Deps, operations: readonly Operation[]): string {
  const base = deps.config.publicUrl;
  const tools = operations.filter((op) => op.mcpTool);
  const rest = operations.filter(isRestOperation);
  const call = (op: RestOperation) => `${op.method} ${base}${op.path}`;
  const [start, poll, check] = ['startSignup', 'pollSignup', 'setupCheck'].map((id) =>
    operationById(operations, id),
  );
  const lines = [
    '# agent-commons',
    '',
    '> REST, MCP and A2A service through which AI agents act on behalf of the members of a community space. One operation registry feeds every surface, so the rules (scopes, tiers, rate limits, sandbox) are the same everywhere.',
    '',
    `API version ${API_VERSION}, served unversioned at ${base}.`,
    '',
    '## Getting a token',
    '',
    `- Device flow: ${call(start)} with {"scopes": [...], "client_name": "..."}, show the member the verification URL and user_code, then ${call(poll)}?device_code=... every \`interval\` seconds (a 429 slow_down gives a longer interval to keep) until it answers status completed with the agent token, exactly once (standard endpoints: POST ${base}/oauth/device_authorization and POST ${base}/oauth/token).`,
    `- MCP hosts: OAuth 2.1 authorization code with PKCE, discovered from the 401 of POST ${base}/api/mcp (RFC 9728 metadata at GET ${base}/.well-known/oauth-protected-resource/api/mcp, the client_id the URL of the host's client ID metadata document, or one from POST ${base}/oauth/register for a host without one); the member approves in the browser.`,
    '- Send it as `Authorization: Bearer agt_…`; a token minted with sandbox:true gets real reads and simulated writes.',
    `- Check it with ${call(check)}.`,
    '',
    '## Documents',
    '',
    `- [OpenAPI](${base}/openapi.json): every REST operation with its schemas`,
    `- [API reference](${base}/docs): the same, as a page`,
    `- [Agent registration](${base}/.well-known/ai-agent.json): auth schemes, scopes, tiers, rate limits`,
    `- [MCP server](${base}/.well-known/mcp.json): Streamable HTTP at POST ${base}/api/mcp and its tools, at MCP revision ${MODERN_PROTOCOL_VERSIONS.join(', ')} (stateless: server/discover, the version in each request's _meta) and at 2025-11-25 and earlier (initialize), side by side`,
    `- [MCP server card](${base}${SERVER_CARD_PATH}): the server's identity and remote, before connecting`,
    `- [A2A agent card](${base}/.well-known/agent-card.json): JSON-RPC at POST ${base}/api/a2a`,
    '',
    '## One MCP call',
    '',
    "The tool list, with no token; a member's tool is a `tools/call` with `-H 'Authorization: Bearer agt_…'` added:",
    '',
    '```sh',
    mcpCurlExample(base),
    '```',
    '',
    '## REST operations',
    '',
    ...rest.map(
      (op) =>
        `- ${call(op)}: ${op.summary} (${CREDENTIALS[op.credential]}${op.scope ? `, ${op.scope}` : ''})`,
    ),
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
  const agent = aiAgentDocument(deps, operations);
  registerOAuthMetadata(app, deps);
  app.get('/.well-known/ai-agent.json', async () => agent);
  const mcp = mcpDocument(deps, operations);
  app.get('/.well-known/mcp.json', async () => mcp);
  registerMcpServerCard(app, deps);
  const llms = llmsText(deps, operations);
  app.get('/llms.txt', async (_request, reply) => reply.type('text/markdown; charset=utf-8').send(llms));
}
