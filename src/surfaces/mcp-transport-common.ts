// What both MCP transports (src/surfaces/mcp-transport.ts, ours, and mcp-sdk-transport.ts, the
// SDK's) answer alike: the HTTP answer's shape and the two refusals the SDK does not make itself.
import {
  ClientRequestSchema,
  ErrorCode,
  isJSONRPCRequest,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';
import { PROTOTYPE_KEYS_MESSAGE, readJson } from '../http/json-body.ts';

/** Largest JSON-RPC batch accepted, as the SDK's own Streamable HTTP transport. */
export const MAX_BATCH = 100;

export interface HttpAnswer {
  status: number;
  /** JSON text; absent for 202 Accepted. */
  body?: string;
}

export interface ExchangeHeaders {
  accept?: string;
  contentType?: string;
  protocolVersion?: string;
}

/** One POST's exchange: its body and headers to the JSON-RPC answer (the server is connected by the caller). */
export type ExchangeAnswerer = (
  body: string | undefined,
  headers: ExchangeHeaders,
) => Promise<HttpAnswer> | HttpAnswer;

/** The Accept both transports require of a client (Streamable HTTP), spelled as clients send it. */
export const MCP_ACCEPT = 'application/json, text/event-stream';

// The Accept header as the transports judge it. The range */* (with q > 0) takes any media type,
// JSON and event streams included: it is what curl and most HTTP libraries send unless told
// otherwise, so it is read as the header the transport asks for. Anything else is judged as sent (a
// list without text/event-stream is still a 406, as the SDK answers it).
export function acceptOfMcp(accept: string | undefined): string | undefined {
  if (accept === undefined || !accept.includes('*/*')) return accept;
  for (const item of accept.split(',')) {
    const [range, ...parameters] = item.split(';');
    if (range.trim() !== '*/*') continue;
    const weight = parameters.find((parameter) => parameter.split('=')[0].trim().toLowerCase() === 'q');
    if (weight === undefined || Number(weight.split('=')[1]?.trim()) > 0) return MCP_ACCEPT;
  }
  return accept;
}

export function failure(status: number, code: number, message: string): HttpAnswer {
  return { status, body: JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }) };
}

/**
 * The body as both transports read it, by the JSON rule every surface shares (src/http/json-body.ts):
 * its value, or the refusal. A prototype key is an Invalid Request (400, -32600) that says so, before
 * any message is dispatched: parsed as the SDK would, the key is dropped and the call runs without it.
 */
export function readBody(
  body: string | undefined,
): { value: unknown } | { refusal: HttpAnswer; notJson: boolean } {
  const reading = readJson(body ?? '');
  if (reading.ok) return { value: reading.value };
  if (reading.refused === 'prototype_key')
    return { refusal: failure(400, -32600, `Invalid Request: ${PROTOTYPE_KEYS_MESSAGE}`), notJson: false };
  return { refusal: failure(400, -32700, 'Parse error: Invalid JSON'), notJson: true };
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
export function invalidParams(message: JSONRPCMessage): JSONRPCMessage | undefined {
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

/**
 * Answers are matched to requests by id, so a batch whose requests repeat an id could never be
 * answered apart (the SDK would send the first answer alone): refused before anything runs.
 */
export function repeatedIdRefusal(messages: readonly JSONRPCMessage[]): HttpAnswer | undefined {
  const ids = messages.filter(isJSONRPCRequest).map((message) => message.id);
  if (new Set(ids).size === ids.length) return undefined;
  return failure(400, -32600, 'Invalid Request: Request ids in a batch must be unique');
}
