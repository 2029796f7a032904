import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, apiError, errors, toApiError } from '../core/errors.ts';
import { SESSION_COOKIE } from '../domain/auth/sessions.ts';
import { bearerChallenge } from '../http/bearer-challenge.ts';
import { rateKeyForIp, readCookie } from '../http/client.ts';
import { type JsonReading, PROTOTYPE_KEYS_MESSAGE } from '../http/json-body.ts';
import { serializedPayload } from '../http/serialized-answers.ts';
import { bodyCapOf, payloadTooLarge } from '../operations/body-cap.ts';
import { type CallResult, logUnavailable, renderError } from '../operations/pipeline/answer.ts';
import { chargeAnonymous } from '../operations/pipeline/charge.ts';
import { runOperationNow } from '../operations/pipeline/run.ts';
import type { Deps } from '../operations/services.ts';
import { type CallRequest, type HttpMessage, isRestOperation, type Operation } from '../operations/types.ts';
import { errorPage, wantsPage } from '../web/error-pages.ts';

/** What the pipeline reads of an HTTP request (a Fastify request is one). */
export interface HttpRequestView {
  id: string;
  ip: string;
  headers: IncomingHttpHeaders;
  log?: CallRequest['log'];
  /** Method and target (path and query) as received, for a signed request (reference §7). */
  method?: string;
  url?: string;
  /** The parsed body, or the body itself where the surface parses it (MCP). */
  body?: unknown;
  /** The body as received, where the JSON parser kept it (src/http/raw-body.ts). */
  rawBody?: string;
  /** The connection it came on (see CallRequest.connection). */
  socket?: object;
}

export function header(request: { headers: IncomingHttpHeaders }, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The pipeline's view of an HTTP request, built as one literal (surfaces must not spread-copy it:
 * V8 would hand every pipeline step a slow-shaped object). MCP passes `withSession: false`, since a
 * browser cookie riding along must not authenticate an agent call.
 */
export function callRequestFrom(
  request: HttpRequestView,
  input: unknown,
  operations?: readonly Operation[],
  surface: CallRequest['surface'] = 'rest',
  withSession = true,
): CallRequest {
  // node gives these three as one string each (a repeated Cookie joined, a repeated User-Agent or
  // Authorization dropped), so each is read by name: one keyed read for many names costs more.
  const { headers } = request;
  return {
    surface,
    requestId: request.id,
    ip: rateKeyForIp(request.ip),
    userAgent: headers['user-agent'],
    authorization: headers.authorization,
    sessionId: withSession ? readCookie(headers.cookie, SESSION_COOKIE) : undefined,
    idempotencyKey: header(request, 'idempotency-key'),
    input,
    log: request.log,
    operations,
    headersUnused: false,
    httpHeaders: request.headers,
    http: httpMessageOf(request),
    connection: request.socket,
  };
}

const httpMessages = new WeakMap<HttpRequestView, HttpMessage>();

/**
 * What a signature covers; only a signed request with a bearer needs one (an unsigned one is passed
 * or refused on its headers alone), so only it gets one. One object per HTTP request, however many
 * calls it carries (an MCP batch, the credential check before initialize), so they share one
 * signature verdict and its nonce is claimed once.
 */
function httpMessageOf(request: HttpRequestView): HttpMessage | undefined {
  const { headers } = request;
  if (headers.authorization === undefined || request.method === undefined) return undefined;
  if (headers['signature-input'] === undefined && headers.signature === undefined) return undefined;
  let message = httpMessages.get(request);
  if (!message) {
    const body = request.rawBody ?? (typeof request.body === 'string' ? request.body : undefined);
    message = { method: request.method, target: request.url ?? '/', body };
    httpMessages.set(request, message);
  }
  return message;
}

/** RFC 9745 Deprecation (a structured date) and RFC 8594 Sunset, from the operation's declaration. */
export function deprecationHeaders(op: Operation): Record<string, string> {
  if (!op.deprecated) return {};
  const headers: Record<string, string> = {
    deprecation: `@${Math.floor(Date.parse(op.deprecated.since) / 1000)}`,
    sunset: new Date(op.deprecated.sunset).toUTCString(),
  };
  if (op.deprecated.link) headers.link = `<${op.deprecated.link}>; rel="deprecation"`;
  return headers;
}

export const JSON_TYPE = 'application/json; charset=utf-8';

/** A POST answered whole by a JSON-RPC endpoint (MCP, A2A): its route sends it as it is. */
export interface WholeAnswer {
  status: number;
  headers: Record<string, string>;
  body?: string;
}

/** Appends each header of `set` to a flat name, value list (the form node's writeHead takes). */
function appendHeaders(list: string[], set: Record<string, string>): void {
  for (const name in set) list.push(name, set[name]);
}

/**
 * What REST sends for a pipeline result: the JSON
 * payload (the cached bytes, gzipped when the client takes gzip, or the body serialized), and the
 * headers beyond the request-id pair (the result's, the operation's deprecation, the encoding's)
 * appended to `headers` as name, value pairs. The sets never share a name, so nothing is merged
 * or copied: on a cached read, building the answer's headers was a measurable part of its cost.
 */
export function restAnswer(
  result: CallResult,
  deprecation: Record<string, string> | undefined,
  acceptEncoding: string | undefined,
  headers: string[],
): Buffer | string | undefined {
  appendHeaders(headers, result.headers);
  if (deprecation) appendHeaders(headers, deprecation);
  const serialized = serializedPayload(result, acceptEncoding);
  if (!serialized) return result.body === undefined ? undefined : JSON.stringify(result.body);
  if (serialized.headers) appendHeaders(headers, serialized.headers);
  return serialized.payload;
}

/** Sends a pipeline result as REST answers it (see restAnswer). */
function sendResult(
  reply: FastifyReply,
  result: CallResult,
  deprecation: Record<string, string> | undefined,
): void {
  const headers: string[] = [];
  const payload = restAnswer(result, deprecation, header(reply.request, 'accept-encoding'), headers);
  reply.code(result.status);
  for (let i = 0; i < headers.length; i += 2) reply.header(headers[i], headers[i + 1]);
  if (payload === undefined) reply.send();
  else reply.type(JSON_TYPE).send(payload);
}

export function registerRestOperations(
  app: FastifyInstance,
  deps: Deps,
  operations: readonly Operation[],
): void {
  // Operations without a path are MCP/A2A-only (reference §1): no route.
  for (const op of operations.filter(isRestOperation)) {
    const deprecation = op.deprecated ? deprecationHeaders(op) : undefined;
    for (const url of [op.path, ...(op.aliases ?? [])]) {
      app.route({
        method: op.method,
        url,
        bodyLimit: bodyCapOf(op, deps),
        // Not an async function, and it returns nothing (Fastify would send what it returned): a
        // call the pipeline answers at once (a cached read) is sent in the same turn, with no
        // promise; one that waits is sent when it settles. A throw goes to the error handler either
        // way, as from an async handler.
        handler(request: FastifyRequest, reply: FastifyReply): void {
          const input = op.inputFrom === 'query' ? request.query : request.body;
          const running = runOperationNow(deps, op, callRequestFrom(request, input, operations));
          if (!(running instanceof Promise)) {
            sendResult(reply, running, deprecation);
            return;
          }
          running.then(
            (result) => sendResult(reply, result, deprecation),
            (error: unknown) => reply.send(error instanceof Error ? error : new Error(String(error))),
          );
        },
      });
    }
  }
}

/** A JSON body that did not read (src/http/json-body.ts), as REST answers it: 400 invalid_json. */
export function refusedJson(refused: Extract<JsonReading, { ok: false }>['refused']): ApiError {
  return refused === 'prototype_key' ? errors.invalidJson(PROTOTYPE_KEYS_MESSAGE) : errors.invalidJson();
}

/** Failures Fastify raises before an operation runs (body size, media type, JSON syntax). */
export function translateFrameworkError(error: Error & { code?: string; statusCode?: number }): ApiError {
  if (error instanceof ApiError) return error;
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return payloadTooLarge();
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return apiError('unsupported_media_type');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return errors.invalidJson('Content-Type is application/json but the body is empty.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return errors.invalidJson();
  }
  if (error instanceof SyntaxError) return errors.invalidJson();
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) return apiError('bad_request', { status, message: error.message });
  return toApiError(error);
}

export function registerRestFallbacks(app: FastifyInstance, deps: Deps): void {
  app.setErrorHandler(async (error: Error & { code?: string; statusCode?: number }, request, reply) => {
    // A body that fails to parse on a path with no operation is still the catch-all, not a 400.
    if (request.is404 && isApiPath(request)) return catchAll(deps, request, reply);
    const apiError = error instanceof ApiError ? error : translateFrameworkError(error);
    if (apiError.status === 503) logUnavailable(request.log, error);
    else if (apiError.status >= 500)
      request.log.error({ err: error, requestId: request.id }, 'request failed');
    const rendered = renderError(apiError, { requestId: request.id });
    reply.code(rendered.status).headers(rendered.headers);
    if (wantsPage(request)) {
      const shown = errorPage(deps, request, rendered.status, apiError.message);
      return reply.headers(shown.headers).send(shown.body);
    }
    return rendered.body;
  });

  app.setNotFoundHandler(async (request, reply) => {
    if (isApiPath(request)) return catchAll(deps, request, reply);
    const path = request.url.split('?')[0];
    reply.code(404);
    // A browser gets a page; an API client the JSON error, as every other answer.
    if (wantsPage(request)) {
      const shown = errorPage(deps, request, 404, '');
      return reply.headers(shown.headers).send(shown.body);
    }
    return apiError('not_found', { message: `Nothing is served at ${path}.` }).body(request.id);
  });
}

/**
 * Fastify's `frameworkErrors`: a URL it cannot decode never reaches the error handler, so it is
 * rendered here (the catch-all under /api/, the Error shape elsewhere) instead of Fastify's own body.
 */
export function frameworkErrorHandler(deps: Deps) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    // No request hook runs before a framework error: set what every reply carries here.
    reply.header('x-request-id', request.id).header('x-content-type-options', 'nosniff');
    if (isApiPath(request) && error.code !== 'FST_ERR_ASYNC_CONSTRAINT') {
      catchAll(deps, request, reply).then(
        (body) => reply.send(body),
        (failure) => reply.send(failure),
      );
      return;
    }
    const rendered = renderError(translateFrameworkError(error), { requestId: request.id });
    reply.code(rendered.status).headers(rendered.headers).send(rendered.body);
  };
}

function isApiPath(request: FastifyRequest): boolean {
  return request.url.split('?')[0].startsWith('/api/');
}

/**
 * Spec §5.11: any /api/ path matching no operation is a 401 with the catch-all body and a challenge
 * pointing at the protected-resource metadata.
 */
async function catchAll(deps: Deps, request: FastifyRequest, reply: FastifyReply) {
  const path = request.url.split('?')[0];
  const { headers: rateHeaders } = await chargeAnonymous(deps, rateKeyForIp(request.ip));
  reply
    .code(401)
    .headers(rateHeaders)
    .header('www-authenticate', bearerChallenge(deps.config.publicUrl, 'rest'));
  return {
    error: {
      code: 'no_such_operation',
      message: `No operation matches ${request.method} ${path}. The list is at ${deps.config.publicUrl}/openapi.json.`,
    },
  };
}
