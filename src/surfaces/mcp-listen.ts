// MCP 2026-07-28 `subscriptions/listen` (basic/patterns/subscriptions): the member's event log as
// a long-lived notification stream, the response to the POST being an SSE stream. The log travels
// as this service's extension EVENTS_EXTENSION (the way the revision's tasks extension adds
// `taskIds` and `notifications/tasks`): the client declares the extension in its per-request
// capabilities and asks for it in the listen filter, `{"agent-commons/events": {"types": [...],
// "since": n}}`; each record then arrives as a `notifications/agent-commons/events` carrying the
// subscription id. The read is the operation ic_events_next (src/operations/events/next.ts): the
// stream opens by running it through the pipeline (credential, signature, scope, rate limit,
// input, activity row), and each later read is admitted by the pipeline again (admitOnly), so a
// revoked token or a withdrawn scope ends the stream. New records are told by the storage's append
// feed (one LISTEN connection per instance on PostgreSQL; see docs/decisions.md).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { rpcCodeFor } from '../core/json-rpc-codes.ts';
import { EVENT_TYPES, knownEventTypes, readEvents, watchAppends } from '../domain/eventlog/eventlog.ts';
import { challengeForAnswer } from '../http/bearer-challenge.ts';
import { rateKeyForIp } from '../http/client.ts';
import { readJson } from '../http/json-body.ts';
import { API_VERSION } from '../operations/api-version.ts';
import { nextEventsTool } from '../operations/events/next.ts';
import { chargeAnonymous } from '../operations/pipeline/charge.ts';
import { admitOnly, type CallResult, runOperation } from '../operations/pipeline/run.ts';
import type { Deps } from '../operations/services.ts';
import type { Operation } from '../operations/types.ts';
import { isDraining, onDraining } from './health.ts';
import { scopeChallengeFor } from './mcp-credentials.ts';
import { envelopeRefusal } from './mcp-envelope.ts';
import { callRequestFrom, JSON_TYPE } from './rest.ts';

export const LISTEN_METHOD = 'subscriptions/listen';
/** The first revision with subscriptions/listen; an older client's listen is answered as before. */
const LISTEN_SINCE = '2026-07-28';
/** This service's extension identifier (a single-label vendor prefix: docs/decisions.md). */
export const EVENTS_EXTENSION = 'agent-commons/events';
/** The notification each record travels in. */
export const EVENT_NOTIFICATION = `notifications/${EVENTS_EXTENSION}`;
/**
 * Sent before the records when some after the cursor were deleted by retention: `pruned_through`
 * is the last id no longer kept (ic_events_next's field of the same name).
 */
export const PRUNED_NOTIFICATION = `${EVENT_NOTIFICATION}/pruned`;
/**
 * What server/discover advertises for the listen stream (capabilities.extensions): the extension
 * and the record types a filter may name. The tool list does not change while the service runs, so
 * no `listChanged` is offered.
 */
export const LISTEN_CAPABILITIES = {
  extensions: { [EVENTS_EXTENSION]: { types: [...EVENT_TYPES] } },
} as const;

const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';
const PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';
const CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
const SERVER_INFO = 'io.modelcontextprotocol/serverInfo';
/** The revision's MissingRequiredClientCapabilityError. */
const MISSING_CAPABILITY = -32021;
/** Records read at a time (ic_events_next's largest page). */
const PAGE = 500;
/**
 * An SSE comment this often keeps intermediaries from closing a quiet stream; at each the
 * credential is admitted again too, which bounds how long a token revoked where no record tells of
 * it (an operator's SQL) keeps its stream.
 */
export const KEEP_ALIVE_MS = 15_000;
/** Bytes a client may leave unread before its stream is ended (a listener that stopped reading). */
const UNREAD_BYTES = 1024 * 1024;

type RequestId = string | number;

interface ListenMessage {
  id: RequestId;
  params: Record<string, unknown>;
}

/** An SSE answer in progress, as the app's drain and close end it. */
interface OpenStream {
  /** Sends the graceful result and ends the stream. */
  end(): void;
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function rpcError(id: RequestId | null, code: number, message: string, data?: unknown): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id,
    error: { code, message, ...(data !== undefined && { data }) },
  });
}

function frame(message: unknown): string {
  return `event: message\ndata: ${JSON.stringify(message)}\n\n`;
}

/**
 * The listen request the body carries when this module answers it: a single JSON-RPC request for
 * subscriptions/listen from a client at 2026-07-28 or later (the MCP-Protocol-Version header, or
 * without one the request's own `_meta`). Anything else, a 2025-era client's included, is left to
 * the endpoint as it is.
 */
export function listenMessageOf(request: FastifyRequest): ListenMessage | undefined {
  const body = request.body;
  // Most POSTs are tool calls: the text is searched before anything is parsed a second time.
  if (typeof body !== 'string' || !body.includes(LISTEN_METHOD)) return undefined;
  const reading = readJson(body);
  if (!reading.ok || !isObject(reading.value)) return undefined;
  const message = reading.value;
  if (message.method !== LISTEN_METHOD || message.jsonrpc !== '2.0') return undefined;
  if (typeof message.id !== 'string' && typeof message.id !== 'number') return undefined;
  const params = isObject(message.params) ? message.params : {};
  const meta = isObject(params._meta) ? params._meta : {};
  const version = header(request, 'mcp-protocol-version') ?? meta[PROTOCOL_VERSION];
  if (typeof version !== 'string' || version < LISTEN_SINCE) return undefined;
  return { id: message.id, params };
}

/** What a filter asks of the event log: the types (none: all) and the id to start after. */
interface EventFilter {
  types?: string[];
  since?: number;
}

/** The filter's event-log part; undefined when it asks for none; a string: why it is refused. */
function eventFilterOf(notifications: Record<string, unknown>): EventFilter | undefined | string {
  const asked = notifications[EVENTS_EXTENSION];
  if (asked === undefined || asked === false) return undefined;
  if (asked === true) return {};
  if (!isObject(asked)) return `notifications.${EVENTS_EXTENSION} must be an object`;
  const { types, since } = asked;
  if (types !== undefined && (!Array.isArray(types) || types.some((t) => typeof t !== 'string')))
    return `notifications.${EVENTS_EXTENSION}.types must be an array of strings`;
  if (since !== undefined && !(Number.isSafeInteger(since) && (since as number) >= 0))
    return `notifications.${EVENTS_EXTENSION}.since must be an integer of at least 0`;
  return { types: types as string[] | undefined, since: since as number | undefined };
}

/**
 * The listen endpoint of one app: `serve` answers a POST that listenMessageOf accepted; the open
 * streams end gracefully when the app starts draining or closes.
 */
export function mcpListen(app: FastifyInstance, deps: Deps, operations: readonly Operation[]) {
  const open = new Set<OpenStream>();
  const ownOrigin = new URL(deps.config.publicUrl).origin;
  const serverInfo = { name: 'agent-commons', version: API_VERSION };
  const endAll = () => {
    for (const stream of [...open]) stream.end();
  };
  onDraining(app, endAll);
  app.addHook('preClose', (done) => {
    endAll();
    done();
  });

  function refuse(
    reply: FastifyReply,
    status: number,
    body: string,
    headers: Record<string, string> = {},
  ): FastifyReply {
    return reply
      .code(status)
      .headers(headers)
      .header('content-type', JSON_TYPE)
      .header('mcp-protocol-version', LISTEN_SINCE)
      .send(body);
  }

  /** A refusal of the pipeline's (401, 403, 429, 400) as the JSON-RPC error of the listen request. */
  async function refuseCall(
    request: FastifyRequest,
    reply: FastifyReply,
    id: RequestId,
    result: CallResult,
  ): Promise<FastifyReply> {
    const body = (result.body ?? {}) as { message?: unknown };
    const headers: Record<string, string> = { ...result.headers };
    if (result.status === 401)
      headers['www-authenticate'] = challengeForAnswer(deps.config.publicUrl, 'mcp', result.body);
    if (result.status === 403) {
      const challenge = await scopeChallengeFor(deps, request, result);
      if (challenge) headers['www-authenticate'] = challenge;
    }
    const message = typeof body.message === 'string' ? body.message : 'Refused';
    return refuse(
      reply,
      result.status,
      rpcError(id, rpcCodeFor(result.status), message, result.body),
      headers,
    );
  }

  async function serve(request: FastifyRequest, reply: FastifyReply, message: ListenMessage) {
    const { id, params } = message;
    const origin = header(request, 'origin');
    if (origin !== undefined && origin !== ownOrigin)
      return refuse(reply, 403, rpcError(null, -32000, `Forbidden: Origin ${origin} is not allowed.`));
    if (!/\btext\/event-stream\b/.test(header(request, 'accept') ?? ''))
      return refuse(
        reply,
        406,
        rpcError(id, -32000, 'Not Acceptable: a subscriptions/listen client must accept text/event-stream'),
      );
    const meta = isObject(params._meta) ? params._meta : undefined;
    if (!meta || typeof meta[PROTOCOL_VERSION] !== 'string' || !isObject(meta[CLIENT_CAPABILITIES]))
      return refuse(
        reply,
        400,
        rpcError(
          id,
          -32602,
          `Invalid params: _meta must carry ${PROTOCOL_VERSION} and ${CLIENT_CAPABILITIES}`,
        ),
      );
    // The headers against the body, then the version, as for every other modern request.
    const mismatch = envelopeRefusal(request.headers, LISTEN_METHOD, params, meta[PROTOCOL_VERSION]);
    if (mismatch)
      return refuse(reply, mismatch.status, rpcError(id, mismatch.code, mismatch.message, mismatch.data));
    if (!isObject(params.notifications))
      return refuse(reply, 400, rpcError(id, -32602, 'Invalid params: notifications is required'));
    const filter = eventFilterOf(params.notifications);
    if (typeof filter === 'string')
      return refuse(reply, 400, rpcError(id, -32602, `Invalid params: ${filter}`));
    if (isDraining(app))
      return refuse(
        reply,
        503,
        rpcError(id, rpcCodeFor(503), 'This instance is shutting down; listen again'),
        {
          'retry-after': '1',
        },
      );
    if (!filter) {
      // Nothing this service can deliver was asked for: acknowledged empty and closed at once,
      // charged like any other call that names no tool.
      const charged = await chargeAnonymous(deps, rateKeyForIp(request.ip));
      if (charged.refusal) {
        const { status, message: text } = charged.refusal;
        return refuse(reply, status, rpcError(id, rpcCodeFor(status), text), {
          ...charged.headers,
          ...charged.refusal.headers(),
        });
      }
      const stream = openStream(reply, id, charged.headers);
      stream.send(acknowledgement(id, {}));
      stream.end();
      return reply;
    }
    const capabilities = meta[CLIENT_CAPABILITIES] as Record<string, unknown>;
    if (!isObject(capabilities.extensions) || capabilities.extensions[EVENTS_EXTENSION] === undefined)
      return refuse(
        reply,
        400,
        rpcError(id, MISSING_CAPABILITY, 'Missing required client capability', {
          requiredCapabilities: { extensions: { [EVENTS_EXTENSION]: {} } },
        }),
      );
    return serveEvents(request, reply, id, filter);
  }

  async function serveEvents(
    request: FastifyRequest,
    reply: FastifyReply,
    id: RequestId,
    filter: EventFilter,
  ) {
    const types = knownEventTypes(filter.types);
    const since = filter.since ?? 0;
    const callOf = (cursor: number) =>
      callRequestFrom(request, { since: cursor, types: filter.types, limit: PAGE }, operations, 'mcp', false);
    // Who the stream reads for, before the first read, so that nothing appended between that read
    // and the subscription is missed (the read that follows a wake starts at the cursor).
    const admitted = await admitOnly(deps, nextEventsTool, callOf(since));
    if ('refusal' in admitted) return refuseCall(request, reply, id, admitted.refusal);
    // The operation takes a bearer only: admission refused anything else.
    if (admitted.principal.kind !== 'bearer') throw new Error('ic_events_next admitted no bearer');
    const memberId = admitted.principal.member.id;
    let woken = false;
    let wake = () => {
      woken = true;
    };
    const stopWatching = watchAppends(deps.database, memberId, () => wake());
    // The opening read is the operation itself, through the whole pipeline.
    const opening = await runOperation(deps, nextEventsTool, callOf(since)).catch((error: unknown) => {
      stopWatching();
      throw error;
    });
    if (opening.status !== 200) {
      stopWatching();
      return refuseCall(request, reply, id, opening);
    }
    const page = opening.body as {
      events: { id: number }[];
      cursor: number;
      has_more: boolean;
      pruned_through?: number;
    };
    const stream = openStream(reply, id, opening.headers, stopWatching);
    stream.send(acknowledgement(id, { [EVENTS_EXTENSION]: { ...(types && { types }), since } }));
    let cursor = since;
    const deliver = (events: readonly { id: number }[], prunedThrough?: number) => {
      if (prunedThrough !== undefined && prunedThrough > cursor)
        stream.send({
          jsonrpc: '2.0',
          method: PRUNED_NOTIFICATION,
          params: { _meta: { [SUBSCRIPTION_ID]: id }, pruned_through: prunedThrough },
        });
      for (const event of events) {
        stream.send({
          jsonrpc: '2.0',
          method: EVENT_NOTIFICATION,
          params: { _meta: { [SUBSCRIPTION_ID]: id }, event },
        });
        cursor = event.id;
      }
    };
    deliver(page.events, page.pruned_through);
    cursor = Math.max(cursor, page.cursor);
    let running = false;
    let again = page.has_more || woken;
    const pump = async () => {
      running = true;
      try {
        while (again && !stream.ended) {
          again = false;
          const check = await admitOnly(deps, nextEventsTool, callOf(cursor));
          if ('refusal' in check) {
            const { status, body } = check.refusal;
            const text = (body as { message?: unknown })?.message;
            stream.fail(rpcCodeFor(status), typeof text === 'string' ? text : 'Refused', body);
            return;
          }
          let more = true;
          while (more && !stream.ended) {
            const next = await readEvents(deps.db, memberId, { since: cursor, types, limit: PAGE });
            if (stream.ended) return;
            deliver(next.events, next.pruned_through);
            cursor = Math.max(cursor, next.cursor);
            more = next.has_more;
          }
        }
      } catch (error) {
        request.log.error({ err: error, requestId: request.id }, 'mcp listen stream failed');
        stream.fail(rpcCodeFor(500), 'Internal error');
      } finally {
        running = false;
      }
    };
    wake = () => {
      again = true;
      if (!running) void pump();
    };
    stream.onKeepAlive(wake);
    if (again) void pump();
    return reply;
  }

  function acknowledgement(id: RequestId, notifications: Record<string, unknown>) {
    return {
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { _meta: { [SUBSCRIPTION_ID]: id }, notifications },
    };
  }

  /** The SSE answer: its head written now, frames as they come, ended once (by either side). */
  function openStream(
    reply: FastifyReply,
    id: RequestId,
    headers: Record<string, string>,
    stop: () => void = () => {},
  ) {
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string>),
      ...headers,
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
      'mcp-protocol-version': LISTEN_SINCE,
    });
    let keepAlive: NodeJS.Timeout | undefined;
    let onBeat = () => {};
    const stream = {
      ended: false,
      send(message: unknown) {
        if (stream.ended) return;
        raw.write(frame(message));
        // The records wait in the log, not in memory: the client listens again from its cursor.
        if (raw.writableLength > UNREAD_BYTES) stream.fail(-32000, 'The client is not reading the stream');
      },
      onKeepAlive(beat: () => void) {
        onBeat = beat;
      },
      /** The server's own end: a result for a graceful one (drain, close). */
      end() {
        if (stream.ended) return;
        stream.send({
          jsonrpc: '2.0',
          id,
          result: { resultType: 'complete', _meta: { [SUBSCRIPTION_ID]: id, [SERVER_INFO]: serverInfo } },
        });
        finish();
        raw.end();
      },
      /** The server's end for a reason the client must hear (a revoked token): an error answer. */
      fail(code: number, message: string, data?: unknown) {
        if (stream.ended) return;
        raw.write(`event: message\ndata: ${rpcError(id, code, message, data)}\n\n`);
        finish();
        raw.end();
      },
    };
    const finish = () => {
      stream.ended = true;
      clearInterval(keepAlive);
      open.delete(stream);
      stop();
    };
    keepAlive = setInterval(() => {
      raw.write(':\n\n');
      onBeat();
    }, KEEP_ALIVE_MS);
    keepAlive.unref();
    // The client closed the stream: the subscription is cancelled, nothing more is sent.
    raw.on('close', () => {
      if (!stream.ended) finish();
    });
    open.add(stream);
    return stream;
  }

  return { serve };
}
