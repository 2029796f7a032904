import type { TSchema } from '@sinclair/typebox';
import { type HttpErrorCode, statusOfCode } from '../core/error-catalogue.ts';
import { SCOPE_CATALOG } from '../domain/access/scopes.ts';
import { API_VERSION } from '../operations/api-version.ts';
import { bodyCapOf } from '../operations/body-cap.ts';
import { effectsOf } from '../operations/effects.ts';
import { ErrorSchema, RateInfoSchema, toJsonSchema } from '../operations/schemas.ts';
import type { Deps } from '../operations/services.ts';
import { type DocumentedError, isRestOperation, type Operation } from '../operations/types.ts';

/** The shared components: a schema with one of these $ids is referenced, not repeated. */
const componentRef = (id: string) =>
  id === 'RateInfo' || id === 'Error' ? `#/components/schemas/${id}` : undefined;

const plain = (schema: TSchema) => toJsonSchema(schema, componentRef);
const component = (schema: TSchema) => toJsonSchema(schema, componentRef, false);

const CROSS_SITE = 'A browser request with the session cookie from another site (cross_site_request)';

const RATE_LIMITED =
  'Rate limit exhausted: every call counts against a per-minute budget (per token, or per IP without one), besides any quota of its own; Retry-After says when to come back';

/**
 * What the pipeline itself answers before an operation's handler runs (operations/pipeline/), by the
 * kind of operation: each is declared unless the operation already lists the status, in which case
 * the pipeline's reason is added to its description.
 */
function pipelineErrors(op: Operation): DocumentedError[] {
  const withBody = op.method !== 'GET';
  const credentialed = op.credential !== 'public' && op.credential !== 'optional_bearer';
  const sessionWrite = (op.credential === 'session' || op.credential === 'bearer_or_session') && withBody;
  const bearerCodes: HttpErrorCode[] = [
    'missing_token',
    'invalid_authorization',
    'invalid_token',
    'token_revoked',
    'signature_verification_failed',
  ];
  const credentialCodes: HttpErrorCode[] =
    op.credential === 'session'
      ? ['session_required', 'session_expired']
      : op.credential === 'bearer'
        ? bearerCodes
        : [...bearerCodes, 'session_expired'];
  const errors: (DocumentedError | false)[] = [
    {
      status: statusOfCode('validation_failed'),
      description: withBody
        ? 'The body is not JSON (invalid_json) or breaks the input schema: an unknown field, a wrong type (validation, with field)'
        : 'The query breaks the input schema: an unknown parameter, a wrong type (validation, with field)',
      codes: withBody ? ['validation_failed', 'invalid_json'] : ['validation_failed'],
    },
    credentialed && {
      status: statusOfCode('invalid_token'),
      description: 'Missing, unknown, expired or revoked credential',
      codes: credentialCodes,
    },
    op.scope !== undefined &&
      credentialed && {
        status: statusOfCode('insufficient_scope'),
        description: `The token lacks ${op.scope}, or the member's tier no longer grants it (tier)`,
        codes: ['insufficient_scope', 'tier_insufficient'],
      },
    sessionWrite && {
      status: statusOfCode('cross_site_request'),
      description: CROSS_SITE,
      codes: ['cross_site_request'],
    },
    withBody && {
      status: statusOfCode('payload_too_large'),
      description: 'Body larger than the operation accepts (payload_too_large)',
      codes: ['payload_too_large'],
    },
    withBody && {
      status: statusOfCode('unsupported_media_type'),
      description: 'A body that is not sent as application/json (unsupported_media_type)',
      codes: ['unsupported_media_type'],
    },
    { status: statusOfCode('rate_limited'), description: RATE_LIMITED, codes: ['rate_limited'] },
    {
      status: statusOfCode('headers_too_large'),
      description: 'Request headers larger than the HTTP server accepts (answered before any operation runs)',
      codes: ['headers_too_large'],
    },
  ];
  return errors.filter((error): error is DocumentedError => error !== false);
}

/**
 * The operation's own refusals, and those the pipeline adds for every operation of its kind (the
 * pipeline's codes joined to a status the operation lists itself: the reference page shows them).
 */
export function withPipelineErrors(op: Operation): DocumentedError[] {
  const listed = op.errors.map((error) => ({ ...error }));
  for (const added of pipelineErrors(op)) {
    const same = listed.find((error) => error.status === added.status);
    if (!same) {
      listed.push({ ...added });
      continue;
    }
    same.codes = [...new Set([...(same.codes ?? []), ...(added.codes ?? [])])];
    if (added.status === statusOfCode('rate_limited') || added.description === CROSS_SITE)
      same.description = `${same.description}; or ${added.description[0].toLowerCase()}${added.description.slice(1)}`;
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

function documentedHeaders(headers: Record<string, string> | undefined) {
  if (!headers) return undefined;
  return Object.fromEntries(
    Object.entries(headers).map(([name, description]) => [name, { description, schema: { type: 'string' } }]),
  );
}

/** The input schema as agents must fill it: with the fields only a browser session may leave out required. */
export function agentInputSchema(op: Operation): {
  properties?: Record<string, Record<string, unknown>>;
  required?: string[];
} {
  const input = plain(op.input) as {
    properties?: Record<string, Record<string, unknown>>;
    required?: string[];
  };
  if (!op.agentRequired?.length) return input;
  return { ...input, required: [...new Set([...(input.required ?? []), ...op.agentRequired])] };
}

/** What a sandbox token's call of a simulated write answers instead (operations/pipeline/sandbox.ts). */
const SANDBOX_RECEIPT = {
  type: 'object',
  required: ['ok', 'sandbox', 'simulated', 'would_have', 'note'],
  properties: {
    ok: { const: true },
    sandbox: { const: true },
    simulated: { const: true },
    would_have: {
      type: 'object',
      required: ['action', 'scope', 'args'],
      properties: { action: { type: 'string' }, scope: { type: ['string', 'null'] }, args: {} },
    },
    note: { type: 'string' },
  },
};

function successResponses(op: Operation): Record<string, unknown> {
  const headers = { ...RATE_HEADERS, ...documentedHeaders(op.headers?.success) };
  const schema = plain(op.output);
  if (op.sandbox !== 'simulated')
    return {
      [String(op.successStatus)]: {
        description: 'Success',
        headers,
        content: { 'application/json': { schema } },
      },
    };
  const receipt = {
    description: 'A sandbox token: the simulated receipt, nothing changed',
    headers: RATE_HEADERS,
  };
  if (op.successStatus === 200)
    return {
      '200': {
        description: 'Success; or, for a sandbox token, the simulated receipt (nothing changed)',
        headers,
        content: { 'application/json': { schema: { anyOf: [schema, SANDBOX_RECEIPT] } } },
      },
    };
  return {
    '200': { ...receipt, content: { 'application/json': { schema: SANDBOX_RECEIPT } } },
    [String(op.successStatus)]: {
      description: 'Success',
      headers,
      content: { 'application/json': { schema } },
    },
  };
}

function operationObject(op: Operation, deps: Deps) {
  const input = agentInputSchema(op);
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
  for (const [name, description] of Object.entries(op.headers?.request ?? {}))
    parameters.push({ name, in: 'header', required: false, description, schema: { type: 'string' } });
  if (op.idempotent) {
    parameters.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description: 'A retry with the same key within 24 hours replays the first successful result.',
      schema: { type: 'string', maxLength: 255 },
    });
  }
  const responses: Record<string, unknown> = successResponses(op);
  for (const error of withPipelineErrors(op)) {
    const headers =
      error.status === 429
        ? { ...RATE_HEADERS, 'Retry-After': { schema: { type: 'integer' } } }
        : documentedHeaders(error.headers);
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
    // The facts behind the MCP tool annotations, from the same declaration (operations/effects.ts).
    'x-effects': effectsOf(op),
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
