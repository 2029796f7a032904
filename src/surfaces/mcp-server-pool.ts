// The MCP endpoint's pool of SDK servers: each POST served by one taken from the pool, its
// tools/calls run through the same pipeline as REST. The SDK (with zod and its schemas, about
// 10 MB of heap) is loaded with this module, which src/surfaces/mcp.ts imports at the endpoint's
// first POST.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  type CallToolRequest,
  CallToolRequestSchema,
  CallToolResultSchema,
  ErrorCode,
  type JSONRPCMessage,
  type JSONRPCRequest,
  ListToolsRequestSchema,
  McpError,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { challengeForAnswer } from '../http/bearer-challenge.ts';
import { rateKeyForIp } from '../http/client.ts';
import { API_VERSION } from '../operations/api-version.ts';
import { argumentsOverCap } from '../operations/body-cap.ts';
import { renderError } from '../operations/pipeline/answer.ts';
import { chargeAnonymous } from '../operations/pipeline/charge.ts';
import { runOperation } from '../operations/pipeline/run.ts';
import type { Deps } from '../operations/services.ts';
import type { Operation } from '../operations/types.ts';
import { scopeChallengeFor } from './mcp-credentials.ts';
import { jsonRpcError } from './mcp-json-rpc.ts';
import { sdkTransportAnswerer } from './mcp-sdk-transport.ts';
import { describeTool, type ToolOperation, toolResult } from './mcp-tools.ts';
import { ExchangeTransport } from './mcp-transport.ts';
import { acceptOfMcp, type ExchangeAnswerer, type HttpAnswer } from './mcp-transport-common.ts';
import { callRequestFrom, type HttpRequestView, JSON_TYPE, type WholeAnswer } from './rest.ts';

/** Servers kept for reuse: about the number of exchanges in flight at once under load. */
const MAX_IDLE_SERVERS = 64;
/** Headers of a tool call's pipeline result that also belong on the HTTP response. */
const FORWARDED_HEADERS =
  /^(ratelimit|ratelimit-policy|ratelimit-limit|ratelimit-remaining|ratelimit-reset|retry-after)$/;

/** What the tool calls of one HTTP request report back to the HTTP layer. */
interface Exchange {
  /** The challenge of the first tool call refused 401 (with invalid_token when a token was refused). */
  unauthorized?: string;
  /** Whether any tools/call ran: each is charged by the pipeline, the exchange then is not. */
  ranTool: boolean;
  headers: Record<string, string>;
  /** The challenge for a scope the member could grant on re-authorizing (mcp-credentials.ts). */
  scopeChallenge?: string;
}

function header(request: HttpRequestView, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

export interface McpExchangeOptions {
  /** The endpoint's path (the SDK transport is told its full URL). */
  path: string;
  /** 'exchange': our ExchangeTransport, one per pooled server; 'sdk': the SDK's, one per POST. */
  transport: 'exchange' | 'sdk';
}

/**
 * Streamable HTTP in stateless mode (reference §5), JSON responses. Each POST is served by an SDK
 * server of its own, taken from a pool of idle ones and connected to an ExchangeTransport (one
 * exchange at a time, so no two clients' request ids meet), and each tools/call runs the same
 * pipeline as REST. Returns the function that answers one POST whole.
 */
export function mcpExchanges(
  deps: Deps,
  operations: readonly Operation[],
  tools: readonly ToolOperation[],
  options: McpExchangeOptions,
): (request: HttpRequestView) => Promise<WholeAnswer> {
  const { path } = options;
  const byName = new Map(tools.map((op) => [op.mcpTool, op]));
  const listing = tools.map(describeTool);
  // Our own pages and the origins the operator lets call the API from a browser (src/http/cors.ts).
  const allowedOrigins = new Set([new URL(deps.config.publicUrl).origin, ...deps.config.corsOrigins]);
  // The SDK builds a fresh Ajv (meta-schemas and all) for every Server it constructs unless it is
  // handed one: the pooled servers share this one.
  const jsonSchemaValidator = new AjvJsonSchemaValidator();

  /** Refusals the transport does not make itself: a foreign Origin (DNS rebinding) and any unknown protocol version. */
  function refuseHeaders(request: HttpRequestView) {
    const origin = header(request, 'origin');
    if (origin !== undefined && !allowedOrigins.has(origin))
      return jsonRpcError(403, `Forbidden: Origin ${origin} is not allowed.`);
    const version = header(request, 'mcp-protocol-version');
    // The SDK checks this header only after initialize; an unknown version is refused on every request.
    if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
      return jsonRpcError(
        400,
        `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
      );
    }
    return undefined;
  }

  /** A server with its transport, reused exchange after exchange; `current` is the exchange it serves. */
  interface PooledServer {
    server: Server;
    answer: ExchangeAnswerer;
    current?: { request: HttpRequestView; exchange: Exchange };
  }
  const idle: PooledServer[] = [];

  async function createServer(): Promise<PooledServer> {
    const server = new Server(
      { name: 'agent-commons', version: API_VERSION },
      { capabilities: { tools: {} }, jsonSchemaValidator },
    );
    let answer: ExchangeAnswerer;
    if (options.transport === 'sdk') answer = sdkTransportAnswerer(server, deps.config.publicUrl + path);
    else {
      const transport = new ExchangeTransport((request) => answerToolCall(pooled, request));
      await server.connect(transport);
      answer = (body, headers) => transport.handle(body, headers);
    }
    const pooled: PooledServer = { server, answer };
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listing }));
    server.setRequestHandler(CallToolRequestSchema, (call) => callTool(pooled, call));
    return pooled;
  }

  /**
   * tools/call answered by our transport without the SDK server, exactly as the server would answer
   * it (its checks, its result validation, its error shape): the server's per-request machinery and
   * the zod checks that fail on the way (each builds a ZodError) cost more than the call itself
   * (docs/decisions.md, "Libraries"). A task-augmented call still goes to the server, which refuses it.
   */
  function answerToolCall(
    pooled: PooledServer,
    request: JSONRPCRequest,
  ): Promise<JSONRPCMessage> | undefined {
    if (request.method !== 'tools/call' || request.params?.task !== undefined) return undefined;
    const { id } = request;
    const failed = (error: { code?: unknown; message?: string; data?: unknown }): JSONRPCMessage => ({
      jsonrpc: '2.0',
      id,
      error: {
        code: Number.isSafeInteger(error.code) ? (error.code as number) : ErrorCode.InternalError,
        message: error.message ?? 'Internal error',
        ...(error.data !== undefined && { data: error.data }),
      },
    });
    return (async () => {
      // The transport has refused params its schema does not accept (invalidParams), so this parses.
      const result = await callTool(pooled, CallToolRequestSchema.parse(request));
      const checked = CallToolResultSchema.safeParse(result);
      if (!checked.success)
        throw new McpError(ErrorCode.InvalidParams, `Invalid tools/call result: ${checked.error.message}`);
      return { result: checked.data, jsonrpc: '2.0' as const, id };
    })().catch(failed);
  }

  async function callTool(pooled: PooledServer, call: CallToolRequest) {
    const current = pooled.current;
    if (!current) throw new McpError(ErrorCode.InternalError, 'No exchange in progress');
    const { request, exchange } = current;
    exchange.ranTool = true;
    const op = byName.get(call.params.name);
    if (!op) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${call.params.name}`);
    const args = call.params.arguments ?? {};
    const tooLarge = argumentsOverCap(op, deps, args, Buffer.byteLength(String(request.body ?? '')));
    if (tooLarge) return toolResult(renderError(tooLarge, { requestId: request.id }));
    // Bearer only: a browser cookie riding along must not authenticate an MCP call.
    const callRequest = callRequestFrom(request, args, operations, 'mcp', false);
    const result = await runOperation(deps, op, callRequest);
    if (result.status === 401)
      exchange.unauthorized ??= challengeForAnswer(deps.config.publicUrl, 'mcp', result.body);
    if (result.status === 403) exchange.scopeChallenge ??= await scopeChallengeFor(deps, request, result);
    for (const [name, value] of Object.entries(result.headers)) {
      if (FORWARDED_HEADERS.test(name)) exchange.headers[name] = value;
    }
    return toolResult(result);
  }

  /** One POST to the endpoint, answered whole: its route sends it as it is. */
  return async function exchangeOf(request: HttpRequestView): Promise<WholeAnswer> {
    const refusal = refuseHeaders(request);
    if (refusal)
      return { status: refusal.status, headers: { 'content-type': JSON_TYPE }, body: refusal.body };
    const exchange: Exchange = { ranTool: false, headers: {} };
    const pooled = idle.pop() ?? (await createServer());
    pooled.current = { request, exchange };
    let answer: HttpAnswer;
    try {
      answer = await pooled.answer(typeof request.body === 'string' ? request.body : undefined, {
        accept: acceptOfMcp(header(request, 'accept')),
        contentType: header(request, 'content-type'),
        protocolVersion: header(request, 'mcp-protocol-version'),
      });
    } catch (error) {
      // A server that failed mid-exchange is not trusted with another one.
      await pooled.server.close().catch(() => {});
      throw error;
    }
    pooled.current = undefined;
    if (idle.length < MAX_IDLE_SERVERS) idle.push(pooled);
    const headers: Record<string, string> = {};
    if (!exchange.ranTool) {
      // initialize, tools/list, ping and the like: charged like any anonymous call, per IP.
      const charged = await chargeAnonymous(deps, rateKeyForIp(request.ip));
      Object.assign(headers, charged.headers);
      if (charged.refusal) {
        const { status, message } = charged.refusal;
        const failure = jsonRpcError(status, message);
        Object.assign(headers, charged.refusal.headers(), { 'content-type': JSON_TYPE });
        return { status, headers, body: failure.body };
      }
    }
    Object.assign(headers, exchange.headers);
    let status = answer.status;
    // A member tool refused for a missing or refused token is an HTTP 401 with a challenge pointing
    // at the protected-resource metadata (error="invalid_token" when a token was refused), while the
    // body still carries the in-band result. A bad token on initialize, tools/list or a public tool
    // is read as no token, as on REST and A2A (docs/decisions.md, "A bad bearer on a public call").
    if (exchange.unauthorized) {
      status = 401;
      headers['www-authenticate'] = exchange.unauthorized;
    }
    // Tool errors stay in-band (reference §5); the challenge says a re-authorization could cure it.
    else if (exchange.scopeChallenge) headers['www-authenticate'] = exchange.scopeChallenge;
    const version = header(request, 'mcp-protocol-version');
    if (version) headers['mcp-protocol-version'] = version;
    if (answer.body === undefined) return { status, headers };
    headers['content-type'] = JSON_TYPE;
    return { status, headers, body: answer.body };
  };
}
