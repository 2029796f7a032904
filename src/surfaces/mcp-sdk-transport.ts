import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import {
  isInitializeRequest,
  isJSONRPCRequest,
  type JSONRPCMessage,
  JSONRPCMessageSchema,
} from '@modelcontextprotocol/sdk/types.js';
import {
  type ExchangeAnswerer,
  type HttpAnswer,
  invalidParams,
  MAX_BATCH,
  readBody,
  repeatedIdRefusal,
} from './mcp-transport-common.ts';

/**
 * The body parsed once for the SDK (handed over as `parsedBody`), or undefined when it is not JSON
 * or would be refused before ids matter: the SDK then makes that refusal itself, in its own order.
 */
function parsedOrRefused(body: string | undefined, accept?: string, contentType?: string) {
  if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) return {};
  if (!isJsonContentType(contentType ?? null)) return {};
  const read = readBody(body);
  // Not JSON: the SDK refuses it itself. A prototype key: refused here, as the exchange transport does.
  if ('refusal' in read) return read.notJson ? {} : { refusal: read.refusal };
  const parsed = read.value;
  if (!Array.isArray(parsed) || parsed.length < 2 || parsed.length > MAX_BATCH) return { parsed };
  const messages: JSONRPCMessage[] = [];
  for (const item of parsed) {
    const checked = JSONRPCMessageSchema.safeParse(item);
    if (!checked.success) return { parsed };
    messages.push(checked.data);
  }
  if (messages.some(isInitializeRequest)) return { parsed };
  return { parsed, refusal: repeatedIdRefusal(messages) };
}

/**
 * The SDK's Streamable HTTP transport (stateless, JSON responses) for one exchange of a pooled
 * server: the SDK refuses to serve a second request on a stateless transport, so each POST gets a
 * fresh one, connected to the server for that exchange and closed after it (which frees the
 * server for the next). Invalid params and repeated batch ids are answered as the exchange
 * transport answers them (see mcp-transport-common.ts).
 */
export function sdkTransportAnswerer(server: Server, url: string): ExchangeAnswerer {
  return async (body, headers): Promise<HttpAnswer> => {
    const { parsed, refusal } = parsedOrRefused(body, headers.accept, headers.contentType);
    if (refusal) return refusal;
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    const dispatch = transport.onmessage!;
    transport.onmessage = (message, extra) => {
      const invalid = invalidParams(message);
      if (invalid && isJSONRPCRequest(message)) void transport.send(invalid);
      else dispatch(message, extra);
    };
    const requestHeaders: Record<string, string> = {};
    if (headers.accept !== undefined) requestHeaders.accept = headers.accept;
    if (headers.contentType !== undefined) requestHeaders['content-type'] = headers.contentType;
    if (headers.protocolVersion !== undefined)
      requestHeaders['mcp-protocol-version'] = headers.protocolVersion;
    try {
      const response = await transport.handleRequest(
        new Request(url, {
          method: 'POST',
          headers: requestHeaders,
          body: parsed === undefined ? body : undefined,
        }),
        parsed === undefined ? undefined : { parsedBody: parsed },
      );
      const text = await response.text();
      return { status: response.status, body: text === '' ? undefined : text };
    } finally {
      await transport.close();
    }
  };
}
