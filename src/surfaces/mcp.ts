import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { bodyCapOf } from '../operations/body-cap.ts';
import type { Deps } from '../operations/services.ts';
import type { Operation } from '../operations/types.ts';
import { jsonRpcError } from './mcp-json-rpc.ts';
import { listenMessageOf, mcpListen } from './mcp-listen.ts';
import { type ModernMethodHandler, modernMcpExchanges, modernPostOf } from './mcp-modern.ts';
import type { McpExchangeOptions } from './mcp-server-pool.ts';
import { mcpToolOperations } from './mcp-tools.ts';
import { type HttpRequestView, JSON_TYPE, type WholeAnswer } from './rest.ts';

export const MCP_PATH = '/api/mcp';
/** Room for the JSON-RPC envelope around the largest tool arguments an operation accepts. */
const ENVELOPE_BYTES = 8 * 1024;

export interface McpSurfaceOptions {
  /**
   * 'exchange' (the default): our ExchangeTransport, one per pooled server. 'sdk': the SDK's
   * WebStandardStreamableHTTPServerTransport, a fresh one per POST (the bench and the test that
   * both answer alike mount it beside the other, on another path).
   */
  transport?: McpExchangeOptions['transport'];
  path?: string;
  /** A 2026-era method the modern dispatcher does not answer itself (mcp-modern.ts). */
  otherModernMethod?: ModernMethodHandler;
}

/**
 * The MCP endpoint (Streamable HTTP, stateless), in both protocol eras at one URL: a POST of
 * revision 2026-07-28 (its version in `params._meta`) goes to the modern dispatcher
 * (mcp-modern.ts), any other to the pooled SDK servers of the 2025 era (mcp-server-pool.ts). Those,
 * and with them the MCP SDK, are loaded at the first 2025-era POST rather than at start: an
 * instance no such agent speaks to never holds the SDK (docs/decisions.md, "Libraries").
 */
export function registerMcpSurface(
  app: FastifyInstance,
  deps: Deps,
  operations: readonly Operation[],
  options: McpSurfaceOptions = {},
): void {
  const path = options.path ?? MCP_PATH;
  const tools = mcpToolOperations(operations);
  const bodyLimit = Math.max(...tools.map((op) => bodyCapOf(op, deps))) + ENVELOPE_BYTES;
  const exchangeOptions: McpExchangeOptions = { path, transport: options.transport ?? 'exchange' };
  const modern = modernMcpExchanges(deps, operations, tools, { otherMethod: options.otherModernMethod });
  let exchanges: Promise<(request: HttpRequestView) => Promise<WholeAnswer>> | undefined;

  async function exchangeOf(request: HttpRequestView): Promise<WholeAnswer> {
    exchanges ??= import('./mcp-server-pool.ts').then(
      (loaded) => loaded.mcpExchanges(deps, operations, tools, exchangeOptions),
      (error: unknown) => {
        // Tried again by the next POST rather than failing every one after it.
        exchanges = undefined;
        throw error;
      },
    );
    return (await exchanges)(request);
  }

  const listen = mcpListen(app, deps, operations);

  async function handlePost(request: FastifyRequest, reply: FastifyReply) {
    // 2026-07-28 subscriptions/listen: an SSE answer of its own (src/surfaces/mcp-listen.ts).
    const listening = listenMessageOf(request);
    if (listening) return listen.serve(request, reply, listening);
    const modernPost = modernPostOf(request);
    const answer = modernPost ? await modern(modernPost) : await exchangeOf(request);
    reply.code(answer.status).headers(answer.headers);
    if ('stream' in answer) return reply.send(answer.stream);
    return answer.body === undefined ? reply.send() : reply.send(answer.body);
  }

  app.register(async (scope) => {
    // The SDK transport parses the body itself, so a malformed body or a wrong Content-Type gets
    // its JSON-RPC error (-32700, 415) rather than the REST error shape.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit }, (_request, body, done) =>
      done(null, body),
    );
    scope.setErrorHandler((error: Error & { statusCode?: number }, request, reply) => {
      const status = error.statusCode && error.statusCode < 500 ? error.statusCode : 500;
      if (status === 500) request.log.error({ err: error, requestId: request.id }, 'mcp request failed');
      const message =
        status === 413 ? 'Request body too large' : status === 500 ? 'Internal error' : error.message;
      const failure = jsonRpcError(status, message);
      reply.code(status).type(JSON_TYPE).send(failure.body);
    });
    scope.post(path, { bodyLimit }, handlePost);
    // Stateless: there is no stream to resume and no session to end (transport spec allows 405).
    scope.route({
      method: ['GET', 'DELETE'],
      url: path,
      handler: async (_request, reply) => {
        const failure = jsonRpcError(405, 'Method not allowed.');
        return reply.code(405).header('allow', 'POST').type(JSON_TYPE).send(failure.body);
      },
    });
  });
}
