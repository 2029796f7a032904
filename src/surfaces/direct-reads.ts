import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import proxyAddr from '@fastify/proxy-addr';
import { errors, toApiError } from '../core/errors.ts';
import { acceptRequestId, queryInput } from '../http/client.ts';
import { type CallResult, logUnavailable, renderError } from '../operations/pipeline/answer.ts';
import { runOperation } from '../operations/pipeline/run.ts';
import type { Deps } from '../operations/services.ts';
import { isRestOperation, type Operation } from '../operations/types.ts';
import { callRequestFrom, deprecationHeaders, header, JSON_TYPE, restAnswer } from './rest.ts';

interface Logger {
  error(details: Record<string, unknown>, message: string): void;
  info(details: Record<string, unknown>, message: string): void;
  level: string;
}

interface DirectRoute {
  op: Operation;
  /** Deprecation and Sunset of a deprecated operation, as the Fastify route adds them. */
  extraHeaders?: Record<string, string>;
}

export interface DirectReads {
  /** Answers the request and returns true, or returns false and leaves it to Fastify untouched. */
  serve(request: IncomingMessage, response: ServerResponse): boolean;
  /** From now on every request goes to Fastify (it answers 503 while the server closes). */
  stop(): void;
  /** How many requests were answered here rather than by Fastify. */
  readonly answered: number;
}

/**
 * The REST GET operations answered straight from node:http, before Fastify routes them: the same
 * pipeline (`runOperation`), the same request id, client address, query parsing (fast-querystring,
 * as Fastify's router) and the same status, headers and body as the Fastify route. It exists for
 * speed: on a cached public read (the upcoming list, an event lookup) Fastify's per-request request
 * and reply objects, hooks and child logger cost more than the read itself (docs/benchmarks.md).
 * Anything it is not sure to answer as Fastify would (another method, a request body, a path that
 * is not byte for byte an operation's, a fragment, a server that is closing) goes to Fastify.
 */
export function directReads(
  deps: Deps,
  operations: readonly Operation[],
  log: Logger,
  trustProxy: boolean,
): DirectReads {
  const routes = new Map<string, DirectRoute>();
  for (const op of operations.filter(isRestOperation)) {
    if (op.method !== 'GET' || op.inputFrom !== 'query') continue;
    const extraHeaders = op.deprecated ? deprecationHeaders(op) : undefined;
    for (const path of [op.path, ...(op.aliases ?? [])]) routes.set(path, { op, extraHeaders });
  }
  const trustAll = () => true;
  const clientIp = trustProxy
    ? (request: IncomingMessage) => {
        const addresses = proxyAddr.all(request, trustAll);
        return addresses[addresses.length - 1];
      }
    : (request: IncomingMessage) => request.socket.remoteAddress ?? '';
  let stopped = false;
  let answered = 0;
  // Fastify logs two lines per request at level info and below.
  const logsRequests = ['trace', 'debug', 'info'].includes(log.level);

  async function answer(
    route: DirectRoute,
    request: IncomingMessage,
    response: ServerResponse,
    id: string,
    query: string,
  ): Promise<void> {
    const started = logsRequests ? performance.now() : 0;
    // Through the app's own `req` serializer, as Fastify logs it (method, path, id: never the query).
    if (logsRequests)
      log.info({ reqId: id, req: { method: 'GET', url: request.url, id } }, 'incoming request');
    const call = callRequestFrom(
      { id, ip: clientIp(request), headers: request.headers, log, method: 'GET', url: request.url },
      queryInput(query),
      operations,
    );
    let result: CallResult;
    try {
      result = await runOperation(deps, route.op, call);
    } catch (error) {
      const failure = toApiError(error);
      if (failure.status === 503) logUnavailable(log, error);
      else log.error({ err: error, requestId: id }, 'request failed');
      result = renderError(failure, { requestId: id });
    }
    const headers = ['x-request-id', id, 'x-content-type-options', 'nosniff'];
    const payload = restAnswer(result, route.extraHeaders, header(request, 'accept-encoding'), headers);
    if (payload !== undefined) {
      const length = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
      headers.push('content-type', JSON_TYPE, 'content-length', String(length));
    }
    response.writeHead(result.status, headers);
    response.end(payload);
    if (logsRequests)
      log.info(
        { reqId: id, res: { statusCode: result.status }, responseTime: performance.now() - started },
        'request completed',
      );
  }

  return {
    serve(request, response) {
      if (stopped || request.method !== 'GET') return false;
      const url = request.url ?? '';
      const mark = url.indexOf('?');
      const route = routes.get(mark === -1 ? url : url.slice(0, mark));
      if (!route || url.includes('#')) return false;
      const { headers } = request;
      if (headers['content-length'] !== undefined || headers['transfer-encoding'] !== undefined) return false;
      answered++;
      const id = acceptRequestId(headers['x-request-id']) ?? randomUUID();
      answer(route, request, response, id, mark === -1 ? '' : url.slice(mark + 1)).catch((error) => {
        // Only writing the answer can fail here (the pipeline renders its own errors).
        log.error({ err: error, requestId: id }, 'request failed');
        if (response.headersSent) return response.destroy();
        const failure = renderError(errors.internal(), { requestId: id });
        response.writeHead(failure.status, { 'x-request-id': id, 'content-type': JSON_TYPE });
        response.end(JSON.stringify(failure.body));
      });
      return true;
    },
    stop() {
      stopped = true;
    },
    get answered() {
      return answered;
    },
  };
}
