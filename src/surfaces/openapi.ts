import type { TSchema } from '@sinclair/typebox';
import type { Deps } from '../deps.ts';
import { SCOPE_CATALOG } from '../domain/auth/scopes.ts';
import { API_VERSION } from '../operations/api-version.ts';
import { bodyCapOf } from '../operations/body-cap.ts';
import { ErrorSchema, RateInfoSchema, toJsonSchema } from '../operations/schemas.ts';
import { isRestOperation, type Operation } from '../operations/types.ts';

/** The shared components: a schema with one of these $ids is referenced, not repeated. */
const componentRef = (id: string) =>
  id === 'RateInfo' || id === 'Error' ? `#/components/schemas/${id}` : undefined;

const plain = (schema: TSchema) => toJsonSchema(schema, componentRef);
const component = (schema: TSchema) => toJsonSchema(schema, componentRef, false);

const CROSS_SITE = 'A browser request with the session cookie from another site (cross_site_request)';

/** The operation's own refusals, and those the pipeline adds for every operation of its kind. */
function withPipelineErrors(op: Operation): { status: number; description: string }[] {
  const listed = op.errors.map((error) => ({ ...error }));
  const sessionWrite =
    (op.credential === 'session' || op.credential === 'bearer_or_session') && op.method !== 'GET';
  if (sessionWrite) {
    const forbidden = listed.find((error) => error.status === 403);
    if (forbidden)
      forbidden.description = `${forbidden.description}; or ${CROSS_SITE[0].toLowerCase()}${CROSS_SITE.slice(1)}`;
    else listed.push({ status: 403, description: CROSS_SITE });
  }
  return listed.sort((a, b) => a.status - b.status);
}

function security(op: Operation): Record<string, string[]>[] {
  const scopes = op.scope ? [op.scope] : [];
  switch (op.credential) {
    case 'public':
      return [{}, { agentBearer: [] }];
    case 'optional_bearer':
      return [{}, { agentBearer: scopes }];
    case 'bearer':
      return [{ agentBearer: scopes }];
    case 'session':
      return [{ browserSession: [] }];
    case 'bearer_or_session':
      return [{ agentBearer: scopes }, { browserSession: [] }];
  }
}

const RATE_HEADERS = {
  RateLimit: {
    description: 'RFC 9651 list: remaining (r) and reset (t) per policy.',
    schema: { type: 'string' },
  },
  'RateLimit-Policy': {
    description: 'RFC 9651 list: quota (q) and window (w) per policy.',
    schema: { type: 'string' },
  },
  'RateLimit-Limit': { schema: { type: 'integer' } },
  'RateLimit-Remaining': { schema: { type: 'integer' } },
  'RateLimit-Reset': { schema: { type: 'integer' } },
};

function operationObject(op: Operation, deps: Deps) {
  const input = plain(op.input) as {
    properties?: Record<string, Record<string, unknown>>;
    required?: string[];
  };
  const parameters: Record<string, unknown>[] = [];
  if (op.inputFrom === 'query') {
    for (const [name, schema] of Object.entries(input.properties ?? {})) {
      const { description, ...rest } = schema;
      parameters.push({
        name,
        in: 'query',
        required: input.required?.includes(name) ?? false,
        description,
        schema: rest,
      });
    }
  }
  if (op.idempotent) {
    parameters.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description: 'A retry with the same key within 24 hours replays the first successful result.',
      schema: { type: 'string', maxLength: 255 },
    });
  }
  const responses: Record<string, unknown> = {
    [String(op.successStatus)]: {
      description: 'Success',
      headers: RATE_HEADERS,
      content: { 'application/json': { schema: plain(op.output) } },
    },
  };
  for (const error of withPipelineErrors(op)) {
    const headers =
      error.status === 429 ? { ...RATE_HEADERS, 'Retry-After': { schema: { type: 'integer' } } } : undefined;
    responses[String(error.status)] = {
      description: error.description,
      headers,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    };
  }
  const quotas = [...(op.rateLimits?.(deps) ?? []), ...(op.quotas?.(deps) ?? [])];
  return {
    operationId: op.id,
    tags: [op.tag],
    summary: op.summary,
    description: op.description,
    deprecated: op.deprecated ? true : undefined,
    security: security(op),
    parameters: parameters.length ? parameters : undefined,
    requestBody:
      op.inputFrom === 'body' && input.properties && Object.keys(input.properties).length
        ? { required: true, content: { 'application/json': { schema: input } } }
        : undefined,
    responses,
    'x-mcp-tool': op.mcpTool,
    'x-sandbox': op.sandbox,
    'x-rate-limits': quotas.length
      ? quotas.map((q) => ({ name: q.name, limit: q.limit, window: q.window, per: q.per }))
      : undefined,
    'x-body-limit-bytes': op.inputFrom === 'body' ? bodyCapOf(op, deps) : undefined,
  };
}

/** OpenAPI 3.1 description derived from the registry; nothing in it is written by hand. */
export function buildOpenApi(deps: Deps, allOperations: readonly Operation[]) {
  // MCP/A2A-only operations have no path; they are described by tools/list, the agent card and mcp.json.
  const operations = allOperations.filter(isRestOperation);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of operations) {
    paths[op.path] ??= {};
    paths[op.path][op.method.toLowerCase()] = operationObject(op, deps);
    // operationIds must be unique in the document (OpenAPI 3.1 §4.8.10), so an alias gets its own.
    (op.aliases ?? []).forEach((alias, index) => {
      paths[alias] ??= {};
      paths[alias][op.method.toLowerCase()] = {
        ...operationObject(op, deps),
        operationId: `${op.id}Alias${index === 0 ? '' : index + 1}`,
        'x-alias-of': op.path,
      };
    });
  }
  const tags = [...new Set(operations.map((op) => op.tag))].map((name) => ({ name }));
  return JSON.parse(
    JSON.stringify({
      openapi: '3.1.0',
      info: {
        title: 'agent-commons',
        version: API_VERSION,
        description:
          'REST interface through which AI agents act on behalf of the members of a community space. Served unversioned at the root; pin against info.version.',
      },
      servers: [{ url: deps.config.publicUrl }],
      security: [{}],
      tags,
      paths,
      components: {
        schemas: { Error: component(ErrorSchema), RateInfo: component(RateInfoSchema) },
        securitySchemes: {
          agentBearer: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'agt_<base64url of 32 bytes>',
            description: `Per-member, individually revocable agent token. Scopes: ${Object.keys(SCOPE_CATALOG).join(', ')}.`,
          },
          browserSession: {
            type: 'apiKey',
            in: 'cookie',
            name: '__session',
            description: 'Signed-in browser session.',
          },
        },
      },
    }),
  );
}
