// The MCP endpoint at protocol revision 2026-07-28 and later (the "modern" era): stateless, no
// initialize, every request carrying its protocol version, client info and capabilities in
// `params._meta`. Served by this dispatcher beside the pooled SDK servers of the 2025 era
// (mcp-server-pool.ts), from the same tools (mcp-tools.ts), each tools/call through the one pipeline
// (mcp-exchange.ts); it loads no MCP SDK (docs/decisions.md, "MCP 2026-07-28 beside 2025-11-25").
import type { Readable } from 'node:stream';
import { readJson } from '../http/json-body.ts';
import { API_VERSION } from '../operations/api-version.ts';
import type { Deps } from '../operations/services.ts';
import type { Operation } from '../operations/types.ts';
import { envelopeRefusal, MODERN_PROTOCOL_VERSIONS, trimmed } from './mcp-envelope.ts';
import { type Exchange, finishExchange, header, originRefusal, runToolCall } from './mcp-exchange.ts';
import { LISTEN_CAPABILITIES } from './mcp-listen.ts';
import { describeTool, type ToolOperation } from './mcp-tools.ts';
import { type HttpRequestView, JSON_TYPE, type WholeAnswer } from './rest.ts';

/** Revision identifiers are ISO dates: from this one on, a version is of the modern era. */
const FIRST_MODERN_VERSION = '2026-07-28';

const PROTOCOL_VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';
const CLIENT_INFO_KEY = 'io.modelcontextprotocol/clientInfo';
const CLIENT_CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';
const SERVER_INFO_KEY = 'io.modelcontextprotocol/serverInfo';

/** JSON-RPC and MCP error codes of the revision (its "Error Codes" section). */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;

/**
 * How long a client may keep discovery and the tool list fresh (the revision's caching hints). Both
 * change only when the service is deployed with other operations; the list is the same for every
 * caller, so shared caches may keep it too (cacheScope "public").
 */
const LIST_TTL_MS = 600_000;

/**
 * The server capabilities whose methods this service does not offer, by method prefix. The revision
 * answers a method behind a capability the server did not advertise with Method not found, not with
 * that feature's own errors: a `resources/read` of any URI is -32601, never the "resource not found"
 * -32602 a server with resources answers (docs/decisions.md, "Resource not found without resources").
 */
const UNOFFERED_CAPABILITIES: readonly [prefix: string, capability: string][] = [
  ['resources/', 'resources'],
  ['prompts/', 'prompts'],
  ['completion/', 'completions'],
  ['logging/', 'logging'],
];

const INSTRUCTIONS =
  'Tools act for a member of this community space. Public tools need no token; member tools need ' +
  'an OAuth bearer token (a 401 names the protected-resource metadata to start from). A sandbox ' +
  "token's writes are simulated. A refusal comes back as a tool result with ok:false and an error code.";

function isModernVersion(version: string): boolean {
  return version >= FIRST_MODERN_VERSION;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A POST of the modern era, with its body parsed when the era was told from it. */
export interface ModernPost {
  request: HttpRequestView;
  reading?: ReturnType<typeof readJson>;
}

/**
 * Which era a POST speaks, as the revision's dual-era rule tells it: a body whose `params._meta`
 * carries the protocol-version key, or an MCP-Protocol-Version header naming a modern revision, is
 * modern; anything else (initialize, a 2025-era header, no header at all) is served as today. The
 * body is parsed here only when it names the key, so a 2025-era POST is not read twice.
 */
export function modernPostOf(request: HttpRequestView): ModernPost | undefined {
  const body = typeof request.body === 'string' ? request.body : '';
  if (body.includes(PROTOCOL_VERSION_KEY)) {
    const reading = readJson(body);
    if (reading.ok && carriesClaim(reading.value)) return { request, reading };
  }
  const version = trimmed(header(request, 'mcp-protocol-version'));
  if (version !== undefined && isModernVersion(version)) return { request };
  return undefined;
}

function carriesClaim(message: unknown): boolean {
  if (Array.isArray(message)) return message.some(carriesClaim);
  if (!isPlainObject(message) || !isPlainObject(message.params)) return false;
  const meta = message.params._meta;
  return isPlainObject(meta) && PROTOCOL_VERSION_KEY in meta;
}

/** One request of the modern era, its envelope checked. */
export interface ModernCall {
  request: HttpRequestView;
  id: string | number;
  method: string;
  params: Record<string, unknown>;
  protocolVersion: string;
  clientCapabilities: Record<string, unknown>;
  clientInfo?: { name: string; version: string; [key: string]: unknown };
  exchange: Exchange;
}

/** An answer as a stream (subscriptions/listen): the route pipes it out as it comes. */
export interface StreamAnswer {
  status: number;
  headers: Record<string, string>;
  stream: Readable;
}

export type ModernAnswer = WholeAnswer | StreamAnswer;

/**
 * The seam for a method the dispatcher does not answer itself (subscriptions/listen): given the
 * checked call, an answer, or undefined for "not this method either" (404, Method not found).
 */
export type ModernMethodHandler = (call: ModernCall) => Promise<ModernAnswer | undefined> | undefined;

type RpcError = { code: number; message: string; data?: unknown };

/** A JSON-RPC outcome before it is an HTTP answer: the result, or the error with its HTTP status. */
type Outcome = { result: Record<string, unknown> } | { error: RpcError; status: number };

function refused(status: number, code: number, message: string, data?: unknown): Outcome {
  return { status, error: { code, message, ...(data !== undefined && { data }) } };
}

export interface ModernOptions {
  /** Methods answered beside this dispatcher's own (see ModernMethodHandler). */
  otherMethod?: ModernMethodHandler;
}

/**
 * The modern era's dispatcher. Answers server/discover, tools/list and tools/call; every other
 * method (initialize, ping, logging/setLevel, resources, prompts, …) is 404 with Method not found,
 * unless `otherMethod` answers it. Returns the function that answers one modern POST.
 */
export function modernMcpExchanges(
  deps: Deps,
  operations: readonly Operation[],
  tools: readonly ToolOperation[],
  options: ModernOptions = {},
): (post: ModernPost) => Promise<ModernAnswer> {
  const byName = new Map(tools.map((op) => [op.mcpTool, op]));
  // The service's own origin and the ones the operator lists for browser agents (CORS_ALLOWED_ORIGINS).
  const allowedOrigins = new Set([new URL(deps.config.publicUrl).origin, ...deps.config.corsOrigins]);
  const serverMeta = { [SERVER_INFO_KEY]: { name: 'agent-commons', version: API_VERSION } };
  // The list is the same for every caller and every request: built once, sent as is.
  const listing = tools.map(describeTool);
  const discovered = {
    resultType: 'complete',
    supportedVersions: MODERN_PROTOCOL_VERSIONS,
    // subscriptions/listen of the event log is answered beside this dispatcher (mcp-listen.ts).
    capabilities: { tools: {}, ...LISTEN_CAPABILITIES },
    instructions: INSTRUCTIONS,
    ttlMs: LIST_TTL_MS,
    cacheScope: 'public',
    _meta: serverMeta,
  };
  const listed = {
    resultType: 'complete',
    tools: listing,
    ttlMs: LIST_TTL_MS,
    cacheScope: 'public',
    _meta: serverMeta,
  };

  /** The envelope's checks in the revision's order: shape, `_meta`, then the headers against the body. */
  function checked(request: HttpRequestView, message: Record<string, unknown>): Outcome | ModernCall {
    const { method, id } = message;
    const params = message.params === undefined ? {} : message.params;
    if (!isPlainObject(params))
      return refused(400, INVALID_PARAMS, 'Invalid params: params must be an object');
    const meta = params._meta;
    if (!isPlainObject(meta))
      return refused(400, INVALID_PARAMS, 'Invalid params: _meta with the request envelope is required', {
        envelope: { missing: ['_meta'] },
      });
    const protocolVersion = meta[PROTOCOL_VERSION_KEY];
    const capabilities = meta[CLIENT_CAPABILITIES_KEY];
    const clientInfo = meta[CLIENT_INFO_KEY];
    if (typeof protocolVersion !== 'string' || !isPlainObject(capabilities)) {
      const missing = [
        ...(typeof protocolVersion === 'string' ? [] : [PROTOCOL_VERSION_KEY]),
        ...(isPlainObject(capabilities) ? [] : [CLIENT_CAPABILITIES_KEY]),
      ];
      return refused(400, INVALID_PARAMS, `Invalid params: _meta needs ${missing.join(' and ')}`, {
        envelope: { missing },
      });
    }
    if (
      clientInfo !== undefined &&
      !(
        isPlainObject(clientInfo) &&
        typeof clientInfo.name === 'string' &&
        typeof clientInfo.version === 'string'
      )
    )
      return refused(400, INVALID_PARAMS, `Invalid params: ${CLIENT_INFO_KEY} needs a name and a version`);
    const refusal = envelopeRefusal(request.headers, method as string, params, protocolVersion);
    if (refusal) return refused(refusal.status, refusal.code, refusal.message, refusal.data);
    return {
      request,
      id: id as string | number,
      method: method as string,
      params,
      protocolVersion,
      clientCapabilities: capabilities as Record<string, unknown>,
      ...(clientInfo !== undefined && { clientInfo: clientInfo as ModernCall['clientInfo'] }),
      exchange: { ranTool: false, headers: {} },
    };
  }

  async function callTool(call: ModernCall): Promise<Outcome> {
    const { name, arguments: args } = call.params;
    if (typeof name !== 'string')
      return refused(200, INVALID_PARAMS, 'Invalid params: name must be a string');
    if (args !== undefined && !isPlainObject(args))
      return refused(200, INVALID_PARAMS, 'Invalid params: arguments must be an object');
    const op = byName.get(name);
    if (!op) return refused(200, INVALID_PARAMS, `Unknown tool: ${name}`);
    const result = await runToolCall(deps, operations, op, args ?? {}, call.request, call.exchange);
    return { result: { resultType: 'complete', ...result, _meta: serverMeta } };
  }

  function ownMethod(call: ModernCall): Outcome | Promise<Outcome> | undefined {
    switch (call.method) {
      case 'server/discover':
        return { result: discovered };
      case 'tools/list':
        return { result: listed };
      case 'tools/call':
        return callTool(call);
      default:
        return undefined;
    }
  }

  function answerOf(id: string | number | null, outcome: Outcome): { status: number; body: string } {
    if ('result' in outcome)
      return { status: 200, body: JSON.stringify({ jsonrpc: '2.0', id, result: outcome.result }) };
    return { status: outcome.status, body: JSON.stringify({ jsonrpc: '2.0', id, error: outcome.error }) };
  }

  /** What a request of the modern era is answered, before the exchange's HTTP wrapping. */
  async function dispatch(post: ModernPost, exchange: { current: Exchange }) {
    const { request } = post;
    const accept = header(request, 'accept') ?? '';
    if (!accept.includes('application/json') || !accept.includes('text/event-stream'))
      return answerOf(
        null,
        refused(
          406,
          -32000,
          'Not Acceptable: Client must accept both application/json and text/event-stream',
        ),
      );
    const contentType = header(request, 'content-type')?.split(';')[0]?.trim().toLowerCase();
    if (contentType !== 'application/json')
      return answerOf(
        null,
        refused(415, -32000, 'Unsupported Media Type: Content-Type must be application/json'),
      );
    const reading = post.reading ?? readJson(typeof request.body === 'string' ? request.body : '');
    if (!reading.ok)
      return answerOf(
        null,
        reading.refused === 'prototype_key'
          ? refused(
              400,
              INVALID_REQUEST,
              'Invalid Request: JSON keys __proto__ and constructor.prototype are not accepted.',
            )
          : refused(400, PARSE_ERROR, 'Parse error: Invalid JSON'),
      );
    const message = reading.value;
    if (Array.isArray(message))
      return answerOf(
        null,
        refused(
          400,
          INVALID_REQUEST,
          'Invalid Request: batches are not part of protocol revision 2026-07-28',
        ),
      );
    if (!isPlainObject(message) || message.jsonrpc !== '2.0' || typeof message.method !== 'string') {
      const id =
        isPlainObject(message) && (typeof message.id === 'string' || typeof message.id === 'number')
          ? message.id
          : null;
      return answerOf(id, refused(400, INVALID_REQUEST, 'Invalid Request: not a JSON-RPC request'));
    }
    // A notification: the revision defines none from client to server over HTTP; accepted, unread.
    if (!('id' in message)) return { status: 202 };
    const { id } = message;
    if (typeof id !== 'string' && !(typeof id === 'number' && Number.isInteger(id)))
      return answerOf(
        null,
        refused(400, INVALID_REQUEST, 'Invalid Request: id must be a string or an integer'),
      );
    const call = checked(request, message);
    if (!('method' in call)) return answerOf(id, call);
    exchange.current = call.exchange;
    const own = ownMethod(call);
    if (own) return answerOf(id, await own);
    const other = await options.otherMethod?.(call);
    if (other) return other;
    const unoffered = UNOFFERED_CAPABILITIES.find(([prefix]) => call.method.startsWith(prefix))?.[1];
    return answerOf(
      id,
      refused(
        404,
        METHOD_NOT_FOUND,
        `Method not found: ${call.method}`,
        unoffered && { reason: `The server does not offer the ${unoffered} capability` },
      ),
    );
  }

  return async function modernExchangeOf(post: ModernPost): Promise<ModernAnswer> {
    const foreign = originRefusal(post.request, allowedOrigins);
    if (foreign)
      return { status: foreign.status, headers: { 'content-type': JSON_TYPE }, body: foreign.body };
    const exchange = { current: { ranTool: false, headers: {} } as Exchange };
    const answer = await dispatch(post, exchange);
    if ('stream' in answer) return answer;
    if ('headers' in answer) return answer as WholeAnswer;
    return finishExchange(deps, post.request, exchange.current, answer);
  };
}
