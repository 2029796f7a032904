import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ClientRequestSchema,
  ErrorCode,
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

/**
 * Each request method the SDK serves, with the schema its params must meet. The SDK checks params
 * only inside the handler, and answers a mismatch (a tools/call whose arguments are a string, an
 * initialize without clientInfo) as an internal error (-32603): a client mistake, refused here as
 * Invalid params (-32602) instead.
 */
const REQUEST_SCHEMAS = new Map<string, (typeof ClientRequestSchema.options)[number]>(
  ClientRequestSchema.options.map((schema) => [schema.shape.method.value, schema]),
);

/** The JSON-RPC error for a request whose params its method's schema refuses; undefined when they pass. */
function invalidParams(message: JSONRPCMessage): JSONRPCMessage | undefined {
  if (!isJSONRPCRequest(message)) return undefined;
  const schema = REQUEST_SCHEMAS.get(message.method);
  if (!schema) return undefined;
  const checked = schema.safeParse(message);
  if (checked.success) return undefined;
  const issue = checked.error.issues[0];
  const where = issue?.path.length ? `${issue.path.join('.')}: ` : '';
  return {
    jsonrpc: '2.0',
    id: message.id,
    error: {
      code: ErrorCode.InvalidParams,
      message: `Invalid params: ${where}${issue?.message ?? 'invalid'}`,
    },
  };
}

function failure(status: number, code: number, message: string): HttpAnswer {
  return { status, body: JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }) };
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
      for (const message of dispatched) this.onmessage?.(message);
    });
  }
}
