import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  isInitializeRequest,
  isJSONRPCErrorResponse,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  JSONRPCMessageSchema,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';

/** Largest JSON-RPC batch accepted, as the SDK's own Streamable HTTP transport. */
const MAX_BATCH = 100;

export interface HttpAnswer {
  status: number;
  /** JSON text; absent for 202 Accepted. */
  body?: string;
}

export interface ExchangeHeaders {
  accept?: string;
  contentType?: string;
}

function failure(status: number, code: number, message: string): HttpAnswer {
  return { status, body: JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }) };
}

/**
 * Streamable HTTP in stateless mode with JSON responses, for one HTTP exchange at a time: the
 * checks and answers of the SDK's transport (same statuses, codes and messages), without building
 * a WHATWG Request and Response around every POST. A server connected to it is reused for
 * exchange after exchange; because an exchange completes before the next begins, JSON-RPC ids of
 * different clients never meet in one server.
 */
export class ExchangeTransport implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private pending?: {
    order: RequestId[];
    responses: Map<RequestId, JSONRPCMessage>;
    resolve(answer: HttpAnswer): void;
  };

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.pending = undefined;
    this.onclose?.();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    // In JSON-response mode only responses travel back; notifications tied to a request are dropped.
    if (!isJSONRPCResultResponse(message) && !isJSONRPCErrorResponse(message)) return;
    const pending = this.pending;
    const id = message.id ?? options?.relatedRequestId;
    if (!pending || id === undefined || !pending.order.includes(id)) return;
    pending.responses.set(id, message);
    if (pending.responses.size < pending.order.length) return;
    this.pending = undefined;
    const responses = pending.order.map((requestId) => pending.responses.get(requestId));
    pending.resolve({ status: 200, body: JSON.stringify(responses.length === 1 ? responses[0] : responses) });
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
    let raw: unknown;
    try {
      raw = JSON.parse(body ?? '');
    } catch {
      return failure(400, -32700, 'Parse error: Invalid JSON');
    }
    if (Array.isArray(raw) && raw.length > MAX_BATCH)
      return failure(400, -32600, `Invalid Request: Batch must not exceed ${MAX_BATCH} messages`);
    let messages: JSONRPCMessage[];
    try {
      messages = (Array.isArray(raw) ? raw : [raw]).map((message) => JSONRPCMessageSchema.parse(message));
    } catch {
      return failure(400, -32700, 'Parse error: Invalid JSON-RPC message');
    }
    if (messages.some(isInitializeRequest) && messages.length > 1)
      return failure(400, -32600, 'Invalid Request: Only one initialization request is allowed');
    const order = messages.filter(isJSONRPCRequest).map((message) => message.id);
    // Answers are matched to requests by id: a repeated id could never be answered apart.
    if (new Set(order).size !== order.length)
      return failure(400, -32600, 'Invalid Request: Request ids in a batch must be unique');
    if (order.length === 0) {
      for (const message of messages) this.onmessage?.(message);
      return { status: 202 };
    }
    return new Promise<HttpAnswer>((resolve) => {
      this.pending = { order, responses: new Map(), resolve };
      for (const message of messages) this.onmessage?.(message);
    });
  }
}
