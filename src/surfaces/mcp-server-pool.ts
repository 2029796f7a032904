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
import { API_VERSION } from '../operations/api-version.ts';
import type { Deps } from '../operations/services.ts';
import type { Operation } from '../operations/types.ts';
import { type Exchange, finishExchange, header, originRefusal, runToolCall } from './mcp-exchange.ts';
import { jsonRpcError } from './mcp-json-rpc.ts';
import { sdkTransportAnswerer } from './mcp-sdk-transport.ts';
import { describeTool, type ToolOperation } from './mcp-tools.ts';
import { ExchangeTransport } from './mcp-transport.ts';
import { acceptOfMcp, type ExchangeAnswerer, type HttpAnswer } from './mcp-transport-common.ts';
import { type HttpRequestView, JSON_TYPE, type WholeAnswer } from './rest.ts';

/** Servers kept for reuse: about the number of exchanges in flight at once under load. */
const MAX_IDLE_SERVERS = 64;

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
    const foreign = originRefusal(request, allowedOrigins);
    if (foreign) return foreign;
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
    return runToolCall(deps, operations, op, call.params.arguments ?? {}, request, exchange);
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
    return finishExchange(deps, request, exchange, answer);
  };
}
