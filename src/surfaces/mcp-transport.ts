import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  isInitializeRequest,
  isJSONRPCRequest,
  type JSONRPCErrorResponse,
  type JSONRPCMessage,
  JSONRPCMessageSchema,
  type JSONRPCRequest,
  type JSONRPCResultResponse,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import {
  type ExchangeHeaders,
  failure,
  type HttpAnswer,
  invalidParams,
  MAX_BATCH,
  readBody,
  repeatedIdRefusal,
} from './mcp-transport-common.ts';

/**
 * A request the transport answers itself instead of handing it to the connected server (mcp.ts
 * answers tools/call this way); undefined leaves it to the server.
 */
export type Shortcut = (request: JSONRPCRequest) => Promise<JSONRPCMessage> | undefined;

/**
 * Whether a message the server sends is a response. Checked by shape, not with the SDK's
 * isJSONRPCResultResponse/isJSONRPCErrorResponse: a zod check that fails builds a ZodError (an
 * Error, stack and all), which cost tens of µs per call on a busy server (docs/decisions.md, "Libraries").
 */
function isResponse(message: JSONRPCMessage): message is JSONRPCResultResponse | JSONRPCErrorResponse {
  return !('method' in message) && ('result' in message || 'error' in message);
}

/** Only an initialize request's method says so: the full check runs only for those (see isResponse). */
function isInitialize(message: JSONRPCMessage): boolean {
  return 'method' in message && message.method === 'initialize' && isInitializeRequest(message);
}

/** The HTTP answer to requests once each has its response, in the order they were sent. */
function answerOf(order: RequestId[], responses: Map<RequestId, JSONRPCMessage>): HttpAnswer {
  const list = order.map((requestId) => responses.get(requestId));
  return { status: 200, body: JSON.stringify(list.length === 1 ? list[0] : list) };
}

/**
 * Streamable HTTP in stateless mode with JSON responses, for one HTTP exchange at a time: the
 * checks and answers of the SDK's transport (same statuses, codes and messages), without building
 * a WHATWG Request and Response around every POST. A server connected to it is reused for
 * exchange after exchange; because an exchange completes before the next begins, JSON-RPC ids of
 * different clients never meet in one server.
 */
export class ExchangeTransport implements Transport {
  private readonly shortcut?: Shortcut;
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private pending?: {
    order: RequestId[];
    responses: Map<RequestId, JSONRPCMessage>;
    resolve(answer: HttpAnswer): void;
  };

  constructor(shortcut?: Shortcut) {
    this.shortcut = shortcut;
  }

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.pending = undefined;
    this.onclose?.();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    // In JSON-response mode only responses travel back; notifications tied to a request are dropped.
    if (!isResponse(message)) return;
    const pending = this.pending;
    const id = message.id ?? options?.relatedRequestId;
    if (!pending || id === undefined || !pending.order.includes(id)) return;
    pending.responses.set(id, message);
    if (pending.responses.size < pending.order.length) return;
    this.pending = undefined;
    pending.resolve(answerOf(pending.order, pending.responses));
  }

  /** One POST: its checks, then its messages to the connected server, then the answer. */
  handle(body: string | undefined, headers: ExchangeHeaders): Promise<HttpAnswer> | HttpAnswer {
    if (!headers.accept?.includes('application/json') || !headers.accept.includes('text/event-stream'))
      return failure(
        406,
        -32000,
        'Not Acceptable: Client must accept both application/json and text/event-stream',
      );
    if (!isJsonContentType(headers.contentType ?? null))
      return failure(415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
    const read = readBody(body);
    if ('refusal' in read) return read.refusal;
    const raw = read.value;
    if (Array.isArray(raw) && raw.length > MAX_BATCH)
      return failure(400, -32600, `Invalid Request: Batch must not exceed ${MAX_BATCH} messages`);
    let messages: JSONRPCMessage[];
    try {
      messages = (Array.isArray(raw) ? raw : [raw]).map((message) => JSONRPCMessageSchema.parse(message));
    } catch {
      return failure(400, -32700, 'Parse error: Invalid JSON-RPC message');
    }
    if (messages.length > 1 && messages.some(isInitialize))
      return failure(400, -32600, 'Invalid Request: Only one initialization request is allowed');
    const repeated = repeatedIdRefusal(messages);
    if (repeated) return repeated;
    const order = messages.filter(isJSONRPCRequest).map((message) => message.id);
    if (order.length === 0) {
      for (const message of messages) this.onmessage?.(message);
      return { status: 202 };
    }
    const responses = new Map<RequestId, JSONRPCMessage>();
    const dispatched: JSONRPCMessage[] = [];
    for (const message of messages) {
      const refusal = invalidParams(message);
      if (refusal && isJSONRPCRequest(message)) responses.set(message.id, refusal);
      else dispatched.push(message);
    }
    if (responses.size === order.length) return answerOf(order, responses);
    return new Promise<HttpAnswer>((resolve) => {
      this.pending = { order, responses, resolve };
      for (const message of dispatched) {
        const answered = 'id' in message && 'method' in message ? this.shortcut?.(message) : undefined;
        if (answered) answered.then((response) => this.send(response));
        else this.onmessage?.(message);
      }
    });
  }
}
