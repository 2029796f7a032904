import type { FastifyInstance } from 'fastify';
import { errorBody } from '../core/error-catalogue.ts';
import { toApiError } from '../core/errors.ts';
import { challengeForAnswer } from '../http/bearer-challenge.ts';
import { rateKeyForIp } from '../http/client.ts';
import { PROTOTYPE_KEYS_MESSAGE, readJson } from '../http/json-body.ts';
import { bodyCapOf } from '../operations/body-cap.ts';
import { renderError } from '../operations/pipeline/answer.ts';
import type { Deps } from '../operations/services.ts';
import type { Operation } from '../operations/types.ts';
import { A2A_PATH, capabilitiesOf, registerAgentCard } from './a2a-card.ts';
import { errorData, type FailureContext, failureOf, RPC } from './a2a-errors.ts';
import { callMethod, type MethodContext, type RpcError, RpcFailure } from './a2a-methods.ts';
import { LEGACY_VERSION, negotiateVersion } from './a2a-version.ts';
import { type HttpRequestView, header, JSON_TYPE, type WholeAnswer } from './rest.ts';

/** More entries than this in one batch is refused whole: each entry is a full operation call. */
export const MAX_BATCH = 20;
/** Room for the JSON-RPC envelope around the largest arguments an operation accepts. */
const ENVELOPE_ALLOWANCE = 8 * 1024;

type RpcId = string | number | null;
type RpcResponse = { jsonrpc: '2.0'; id: RpcId } & ({ result: unknown } | { error: RpcError });

/** Marks a body that did not parse, so the route answers -32700 instead of Fastify's REST 400. */
const UNPARSABLE = Symbol('unparsable');
/** Marks JSON refused for a prototype key: an Invalid Request (-32600) that says so. */
const PROTOTYPE_KEY = Symbol('prototype key');

function errorResponse(id: RpcId, error: RpcError): RpcResponse {
  return { jsonrpc: '2.0', id, error };
}

function isValidId(id: unknown): id is RpcId {
  return id === null || typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));
}

/** One entry of a request (single or batched); undefined for a notification, which gets no answer. */
async function answer(context: MethodContext, entry: unknown): Promise<RpcResponse | undefined> {
  const request = entry as Record<string, unknown> | null;
  if (typeof request !== 'object' || request === null || Array.isArray(request)) {
    return errorResponse(null, { code: RPC.invalidRequest, message: 'A request must be an object.' });
  }
  const id = isValidId(request.id) ? request.id : null;
  if (request.jsonrpc !== '2.0' || typeof request.method !== 'string' || !isValidId(request.id ?? null)) {
    return errorResponse(id, {
      code: RPC.invalidRequest,
      message: 'A request needs jsonrpc "2.0", a string method and a string or number id.',
    });
  }
  const notification = !Object.hasOwn(request, 'id');
  try {
    const result = await callMethod(context, request.method, request.params);
    return notification ? undefined : { jsonrpc: '2.0', id, result };
  } catch (failure) {
    if (notification) return undefined;
    if (failure instanceof RpcFailure) {
      if (failure.http) context.httpLevel ??= failure.http;
      return errorResponse(id, failure.rpc);
    }
    // Bad input that reached the database (text it cannot store) is still the caller's: -32602.
    const refused = toApiError(failure);
    if (refused.status < 500)
      return errorResponse(id, failureOf(context.failures, renderError(refused, context.call)).rpc);
    context.call.log?.error({ err: failure, requestId: context.call.requestId }, 'a2a method failed');
    // The message is the error's, not repeated in `data`: the body names the code and the request.
    const { message, ...named } = errorBody('internal_error');
    return errorResponse(id, {
      code: RPC.internal,
      message: String(message),
      data: { ...named, request_id: context.call.requestId },
    });
  }
}

async function answerBody(context: MethodContext, body: unknown): Promise<unknown> {
  if (body === UNPARSABLE || body === undefined) {
    return errorResponse(null, { code: RPC.parseError, message: 'Parse error: the body is not JSON.' });
  }
  if (body === PROTOTYPE_KEY) {
    const refusal = errorBody('invalid_json', { detail: PROTOTYPE_KEYS_MESSAGE });
    return errorResponse(null, {
      code: RPC.invalidRequest,
      message: PROTOTYPE_KEYS_MESSAGE,
      data: errorData(context.failures.version, context.failures.base, refusal),
    });
  }
  if (!Array.isArray(body)) return answer(context, body);
  if (body.length === 0 || body.length > MAX_BATCH) {
    return errorResponse(null, {
      code: RPC.invalidRequest,
      message: `A batch holds 1 to ${MAX_BATCH} requests.`,
    });
  }
  // In order, one after another: entries share the caller's rate limits, so order decides who spends them.
  const answers: RpcResponse[] = [];
  for (const entry of body) {
    const response = await answer(context, entry);
    if (response) answers.push(response);
  }
  return answers.length ? answers : undefined;
}

/** The protocol version a request asks for: the A2A-Version header, or the query parameter (§3.6.1). */
function versionAsked(
  request: HttpRequestView,
  query: Record<string, unknown> | undefined,
): string | undefined {
  const fromQuery = query?.['A2A-Version'];
  return header(request, 'a2a-version') ?? (typeof fromQuery === 'string' ? fromQuery : undefined);
}

/**
 * The A2A surface: JSON-RPC 2.0 at /api/a2a and the agent card. Every call goes through the same
 * pipeline as REST (ARCHITECTURE.md §2); this file only speaks the envelope.
 */
export function registerA2a(app: FastifyInstance, deps: Deps, operations: readonly Operation[]): void {
  registerAgentCard(app, deps, operations);
  const bodyLimit =
    Math.max(deps.config.defaultBodyLimit, ...capabilitiesOf(operations).map((op) => bodyCapOf(op, deps))) +
    ENVELOPE_ALLOWANCE;
  /** The body read by the JSON rule every surface shares (src/http/json-body.ts). */
  function parsed(body: unknown): unknown {
    if (typeof body !== 'string' || body === '') return UNPARSABLE;
    const reading = readJson(body);
    if (reading.ok) return reading.value;
    return reading.refused === 'prototype_key' ? PROTOTYPE_KEY : UNPARSABLE;
  }

  /** One POST: `request.body` is the body as received; `query` the parsed query string, if any. */
  async function exchangeOf(request: HttpRequestView, query?: Record<string, unknown>): Promise<WholeAnswer> {
    const negotiated = negotiateVersion(versionAsked(request, query));
    const failures: FailureContext = {
      version: 'version' in negotiated ? negotiated.version : LEGACY_VERSION,
      base: deps.config.publicUrl,
      challenge: (body) => challengeForAnswer(deps.config.publicUrl, 'a2a', body),
    };
    const rawBody = typeof request.body === 'string' ? request.body : undefined;
    const context: MethodContext = {
      version: 'version' in negotiated ? negotiated.version : negotiated,
      failures,
      deps,
      operations,
      call: {
        surface: 'a2a',
        requestId: request.id,
        ip: rateKeyForIp(request.ip),
        userAgent: header(request, 'user-agent'),
        authorization: header(request, 'authorization'),
        // No session cookie: a cross-site page could otherwise call capabilities with the member's
        // browser session. A2A is for agents, which carry a bearer.
        log: request.log,
        operations,
        httpHeaders: request.headers,
        // The HTTP request carrying the envelope is what a signature covers (reference §7).
        http: request.headers.authorization
          ? { method: request.method ?? 'POST', target: request.url ?? A2A_PATH, body: rawBody }
          : undefined,
        connection: request.socket,
      },
    };
    const body = parsed(rawBody);
    // In a batch, each entry spends its own allowance: one set of headers could not describe them.
    if (!Array.isArray(body)) context.rateHeaders = {};
    const response = await answerBody(context, body);
    const headers: Record<string, string> = { ...context.rateHeaders };
    if ('version' in negotiated) headers['a2a-version'] = negotiated.version;
    // A refused credential is an HTTP 401 with the challenge, where A2A puts authentication
    // failures; in a batch the other entries' answers keep it 200, and the challenge still goes out.
    if (context.httpLevel) Object.assign(headers, context.httpLevel.headers);
    // Only notifications: JSON-RPC sends nothing back.
    if (response === undefined) return { status: 204, headers };
    // Other errors travel in the body with 200, as JSON-RPC over HTTP expects.
    const status = context.httpLevel && !Array.isArray(response) ? context.httpLevel.status : 200;
    headers['content-type'] = JSON_TYPE;
    return { status, headers, body: JSON.stringify(response) };
  }

  // Its own scope, so a body that fails to parse reaches the route (-32700) instead of the REST
  // error handler (400 invalid_json); oversized bodies still get the REST 413 in the Error shape.
  app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    // Any media type: JSON-RPC clients differ in what they declare, and the envelope is JSON regardless.
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit }, (_request, body, done) =>
      done(null, body),
    );
    scope.post(A2A_PATH, { bodyLimit }, async (request, reply) => {
      const answer = await exchangeOf(request, request.query as Record<string, unknown> | undefined);
      reply.code(answer.status).headers(answer.headers);
      return answer.body === undefined ? reply.send() : reply.send(answer.body);
    });
  });
}
