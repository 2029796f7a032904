import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errors, toApiError } from '../core/errors.ts';
import { acceptRequestId, clientAddress, type ProxyTrust, queryInput } from '../http/client.ts';
import { bodyCapOf } from '../operations/body-cap.ts';
import { type CallResult, logUnavailable, renderError } from '../operations/pipeline/answer.ts';
import { runOperationNow } from '../operations/pipeline/run.ts';
import type { Deps } from '../operations/services.ts';
import { type CallRequest, isRestOperation, type Operation } from '../operations/types.ts';
import {
  callRequestFrom,
  deprecationHeaders,
  type HttpRequestView,
  header,
  JSON_TYPE,
  restAnswer,
  translateFrameworkError,
} from './rest.ts';

interface Logger {
  error(details: Record<string, unknown>, message: string): void;
  info(details: Record<string, unknown>, message: string): void;
  level: string;
}

/** A POST answered whole (status, headers, body), whichever door it came in by. */
export interface PostAnswer {
  status: number;
  headers: Record<string, string>;
  body?: string;
}

/**
 * A JSON-RPC endpoint's POST as one function of the request, which its Fastify route and this door
 * both call (the MCP endpoint in mcp.ts, A2A in a2a.ts).
 */
export interface PostEndpoint {
  path: string;
  /** The largest body the endpoint takes (Fastify answers a larger one 413). */
  bodyLimit: number;
  /** On every answer of the endpoint, as its Fastify scope's hooks add them. */
  commonHeaders: Record<string, string>;
  /** `request.body` is the body as received (a string): the endpoint parses it itself. */
  exchange(request: HttpRequestView): Promise<PostAnswer>;
  /** The answer to a POST whose exchange threw, as the endpoint's Fastify error handler gives it. */
  failed(error: unknown, requestId: string): PostAnswer;
}

interface DirectRoute {
  op: Operation;
  /** Deprecation and Sunset of a deprecated operation, as the Fastify route adds them. */
  extraHeaders?: Record<string, string>;
}

/** A POST operation taking a JSON body, with its body cap as its Fastify route has it. */
interface BodyRoute extends DirectRoute {
  bodyLimit: number;
}

/**
 * The app's JSON body reading (src/http/json-body.ts, as its Fastify route reads a body): the parsed
 * value of a body that is not empty, or the refusal the route would have answered.
 */
export type JsonBodyParser = (body: string) => unknown;

/** The Content-Types a POST operation's body is read with here; any other goes to Fastify. */
const PLAIN_JSON = new Set(['application/json', 'application/json; charset=utf-8']);

export interface FrontDoor {
  /** Answers the request and returns true, or returns false and leaves it to Fastify untouched. */
  serve(request: IncomingMessage, response: ServerResponse): boolean;
  /** From now on every request goes to Fastify (it answers 503 while the server closes). */
  stop(): void;
  /** How many requests were answered here rather than by Fastify. */
  readonly answered: number;
}

/**
 * The front door: the REST GET operations, the REST POST operations that take a JSON body, and
 * POSTs to the MCP and A2A endpoints, answered straight from node:http before Fastify routes them:
 * the same pipeline (`runOperation`), the same request id, client address, query parsing
 * (fast-querystring, as Fastify's router), JSON parser and the same status, headers and body as the
 * Fastify route. It exists for speed: on a cached public read (the upcoming list, an event lookup)
 * Fastify's per-request request and reply objects, hooks and child logger cost more than the read
 * itself, and about 7 µs of a highlight write (docs/benchmarks.md). Anything it is not sure to
 * answer as Fastify would (another method, a path that is not byte for byte an operation's, a
 * fragment, a server that is closing) goes to Fastify.
 *
 * A POST comes this way only with a Content-Length between 1 and the endpoint's or operation's body
 * limit, no Transfer-Encoding and a Content-Type; a REST operation's only as plain JSON (PLAIN_JSON)
 * with no Content-Encoding. A JSON-RPC endpoint (MCP, A2A) runs its own exchange (PostEndpoint, the
 * function its Fastify route calls) on the body read here; a REST operation's body goes through
 * the app's JSON reading (`parseJson`, the route's own), and one it refuses is answered as the app's error
 * handler answers it. Any other POST goes to Fastify, which refuses or parses it as it always has.
 */
export function frontDoor(
  deps: Deps,
  operations: readonly Operation[],
  log: Logger,
  trustProxy: ProxyTrust,
  endpoints: readonly PostEndpoint[] = [],
  parseJson?: JsonBodyParser,
): FrontDoor {
  const posts = new Map(endpoints.map((endpoint) => [endpoint.path, endpoint]));
  const routes = new Map<string, DirectRoute>();
  const bodyRoutes = new Map<string, BodyRoute>();
  for (const op of operations.filter(isRestOperation)) {
    const extraHeaders = op.deprecated ? deprecationHeaders(op) : undefined;
    const paths = [op.path, ...(op.aliases ?? [])];
    if (op.method === 'GET' && op.inputFrom === 'query')
      for (const path of paths) routes.set(path, { op, extraHeaders });
    if (parseJson && op.method === 'POST' && op.inputFrom === 'body')
      for (const path of paths) bodyRoutes.set(path, { op, extraHeaders, bodyLimit: bodyCapOf(op, deps) });
  }
  const clientIp = (request: IncomingMessage) => clientAddress(request, trustProxy);
  let stopped = false;
  let answered = 0;
  // Fastify logs two lines per request at level info and below.
  const logsRequests = ['trace', 'debug', 'info'].includes(log.level);

  function answer(
    route: DirectRoute,
    request: IncomingMessage,
    response: ServerResponse,
    id: string,
    query: string,
  ): Promise<void> | undefined {
    const started = logStart(id, 'GET', request.url);
    const call = callRequestFrom(
      {
        id,
        ip: clientIp(request),
        headers: request.headers,
        log,
        method: 'GET',
        url: request.url,
        socket: request.socket,
      },
      queryInput(query),
      operations,
    );
    return runAndSend(route, call, request, response, started);
  }

  /** A POST operation's call: the body read and parsed as its Fastify route would. */
  async function answerBody(
    route: BodyRoute,
    request: IncomingMessage,
    response: ServerResponse,
    id: string,
    length: number,
  ): Promise<void> {
    const started = logStart(id, 'POST', request.url);
    const rawBody = await readBody(request, length);
    let input: unknown;
    try {
      input = (parseJson as JsonBodyParser)(rawBody);
    } catch (error) {
      // As the app's error handler answers a body Fastify's parser refused (a 4xx, not logged), with
      // none of the operation's own headers.
      const refused = renderError(translateFrameworkError(error as Error), { requestId: id });
      send(undefined, request, response, id, refused);
      return logEnd(id, refused.status, started);
    }
    const call = callRequestFrom(
      {
        id,
        ip: clientIp(request),
        headers: request.headers,
        log,
        method: 'POST',
        url: request.url,
        body: input,
        rawBody,
        socket: request.socket,
      },
      input,
      operations,
    );
    await runAndSend(route, call, request, response, started);
  }

  /**
   * Runs the operation and sends its answer: at once when the pipeline answered at once (a cached
   * read), else when its promise settles.
   */
  function runAndSend(
    route: DirectRoute,
    call: CallRequest,
    request: IncomingMessage,
    response: ServerResponse,
    started: number,
  ): Promise<void> | undefined {
    let running: CallResult | Promise<CallResult>;
    try {
      running = runOperationNow(deps, route.op, call);
    } catch (error) {
      running = failureResult(error, call.requestId);
    }
    if (running instanceof Promise)
      return running
        .catch((error) => failureResult(error, call.requestId))
        .then((result) => sendLogged(route, request, response, call.requestId, result, started));
    sendLogged(route, request, response, call.requestId, running, started);
    return undefined;
  }

  function sendLogged(
    route: DirectRoute,
    request: IncomingMessage,
    response: ServerResponse,
    id: string,
    result: CallResult,
    started: number,
  ): void {
    send(route.extraHeaders, request, response, id, result);
    logEnd(id, result.status, started);
  }

  /** The answer to an operation that threw (the pipeline renders its own errors: this is a fault). */
  function failureResult(error: unknown, id: string): CallResult {
    const failure = toApiError(error);
    logFault(error, failure.status, id);
    return renderError(failure, { requestId: id });
  }

  /** As the app's error handlers log what a route threw (an unavailable database: throttled). */
  function logFault(error: unknown, status: number, id: string): void {
    if (status === 503) logUnavailable(log, error);
    else log.error({ err: error, requestId: id }, 'request failed');
  }

  /** A REST answer as the Fastify route sends it (see restAnswer). */
  function send(
    extraHeaders: Record<string, string> | undefined,
    request: IncomingMessage,
    response: ServerResponse,
    id: string,
    result: CallResult,
  ): void {
    const headers = ['x-request-id', id, 'x-content-type-options', 'nosniff'];
    const payload = restAnswer(result, extraHeaders, header(request, 'accept-encoding'), headers);
    if (payload !== undefined) {
      // A kept answer's text has its bytes beside it: their length spares counting the text's.
      const length =
        typeof payload !== 'string'
          ? payload.length
          : payload === result.text && result.bytes
            ? result.bytes.length
            : Buffer.byteLength(payload);
      headers.push('content-type', JSON_TYPE, 'content-length', String(length));
    }
    response.writeHead(result.status, headers);
    response.end(payload);
  }

  /**
   * The body as UTF-8 text. Read with listeners rather than `for await`: the stream's async iterator
   * cost about 3 % of a highlight write's CPU. Fails when the request ends before its body did.
   */
  function readBody(request: IncomingMessage, length: number): Promise<string> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.once('end', () =>
        resolve((chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, length)).toString('utf8')),
      );
      request.once('error', reject);
      request.once('close', () => {
        if (!request.complete) reject(new Error('the request ended before its body'));
      });
    });
  }

  function logStart(id: string, method: string, url: string | undefined): number {
    // Through the app's own `req` serializer, as Fastify logs it (method, path, id: never the query).
    if (logsRequests) log.info({ reqId: id, req: { method, url, id } }, 'incoming request');
    return logsRequests ? performance.now() : 0;
  }

  function logEnd(id: string, status: number, started: number): void {
    if (logsRequests)
      log.info(
        { reqId: id, res: { statusCode: status }, responseTime: performance.now() - started },
        'request completed',
      );
  }

  async function answerPost(
    endpoint: PostEndpoint,
    request: IncomingMessage,
    response: ServerResponse,
    id: string,
    length: number,
  ): Promise<void> {
    const started = logStart(id, 'POST', request.url);
    const body = await readBody(request, length);
    let answer: PostAnswer;
    try {
      answer = await endpoint.exchange({
        id,
        ip: clientIp(request),
        headers: request.headers,
        log,
        method: 'POST',
        url: request.url,
        body,
        socket: request.socket,
      });
    } catch (error) {
      answer = endpoint.failed(error, id);
      logFault(error, answer.status, id);
    }
    const headers = ['x-request-id', id, 'x-content-type-options', 'nosniff'];
    for (const name in endpoint.commonHeaders) headers.push(name, endpoint.commonHeaders[name]);
    for (const name in answer.headers) headers.push(name, answer.headers[name]);
    // A 204 has no body and, as Fastify sends it, no length either.
    if (answer.status !== 204)
      headers.push(
        'content-length',
        answer.body === undefined ? '0' : String(Buffer.byteLength(answer.body)),
      );
    response.writeHead(answer.status, headers);
    response.end(answer.body);
    logEnd(id, answer.status, started);
  }

  /** The length of a POST body this door can read as Fastify would; undefined: Fastify's to answer. */
  function readableLength(request: IncomingMessage, bodyLimit: number): number | undefined {
    const { headers } = request;
    const declared = headers['content-length'];
    if (declared === undefined || headers['transfer-encoding'] !== undefined) return undefined;
    if (headers['content-type'] === undefined || !/^[1-9][0-9]{0,9}$/.test(declared)) return undefined;
    const length = Number(declared);
    return length <= bodyLimit ? length : undefined;
  }

  /**
   * A POST operation's body this door reads as Fastify would: plain JSON (see PLAIN_JSON), no
   * Content-Encoding, a length within the operation's cap; undefined: Fastify's to answer.
   */
  function plainJsonLength(request: IncomingMessage, route: BodyRoute): number | undefined {
    const { headers } = request;
    const type = headers['content-type'];
    if (type === undefined || !PLAIN_JSON.has(type) || headers['content-encoding'] !== undefined)
      return undefined;
    return readableLength(request, route.bodyLimit);
  }

  function failWriting(error: unknown, id: string, response: ServerResponse): void {
    // Only reading the body or writing the answer can fail here (the exchange renders its own errors).
    log.error({ err: error, requestId: id }, 'request failed');
    if (response.headersSent) return void response.destroy();
    const failure = renderError(errors.internal(), { requestId: id });
    response.writeHead(failure.status, { 'x-request-id': id, 'content-type': JSON_TYPE });
    response.end(JSON.stringify(failure.body));
  }

  return {
    serve(request, response) {
      if (stopped) return false;
      if (request.method === 'POST') {
        const url = request.url ?? '';
        const endpoint = posts.get(url);
        const route = endpoint ? undefined : bodyRoutes.get(url);
        const length = endpoint
          ? readableLength(request, endpoint.bodyLimit)
          : route && plainJsonLength(request, route);
        if (length === undefined) return false;
        answered++;
        const id = acceptRequestId(request.headers['x-request-id']) ?? randomUUID();
        const answering = endpoint
          ? answerPost(endpoint, request, response, id, length)
          : answerBody(route as BodyRoute, request, response, id, length);
        answering.catch((error) => {
          // A client that went away mid-body has nobody to answer: the request ends here, said once.
          if (request.destroyed || request.readableAborted) {
            if (logsRequests) log.info({ reqId: id }, 'request aborted before its body arrived');
            return void response.destroy();
          }
          failWriting(error, id, response);
        });
        return true;
      }
      if (request.method !== 'GET') return false;
      const url = request.url ?? '';
      const mark = url.indexOf('?');
      const route = routes.get(mark === -1 ? url : url.slice(0, mark));
      if (!route || url.includes('#')) return false;
      const { headers } = request;
      if (headers['content-length'] !== undefined || headers['transfer-encoding'] !== undefined) return false;
      answered++;
      const id = acceptRequestId(headers['x-request-id']) ?? randomUUID();
      try {
        answer(route, request, response, id, mark === -1 ? '' : url.slice(mark + 1))?.catch((error) =>
          failWriting(error, id, response),
        );
      } catch (error) {
        failWriting(error, id, response);
      }
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
