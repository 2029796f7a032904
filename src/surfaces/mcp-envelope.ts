// What every MCP request of revision 2026-07-28 is checked for once its `_meta` envelope is read:
// the MCP-Protocol-Version, Mcp-Method and Mcp-Name headers against the body (a proxy routes on the
// headers, the server acts on the body, so the two must agree), then the version itself. One check
// for the dispatcher (mcp-modern.ts) and the listen stream (mcp-listen.ts), so a listen is refused
// exactly as a tools/call is.
import type { IncomingHttpHeaders } from 'node:http';

/** The modern revisions served, newest first; 2025-era versions are negotiated by initialize. */
export const MODERN_PROTOCOL_VERSIONS: readonly string[] = ['2026-07-28'];

/** The revision's HeaderMismatchError and UnsupportedProtocolVersionError. */
const HEADER_MISMATCH = -32020;
const UNSUPPORTED_PROTOCOL_VERSION = -32022;

/** The method whose body field the Mcp-Name header mirrors. */
const NAME_SOURCE: Record<string, 'name' | 'uri'> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
};

/** A refusal as the JSON-RPC error of the request, with its HTTP status (400 for all of these). */
export interface EnvelopeRefusal {
  status: number;
  code: number;
  message: string;
  data?: unknown;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

const isOws = (code: number) => code === 0x20 || code === 0x09;

/** RFC 9110 optional whitespace around a field value is not part of it. */
export function trimmed(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return value;
  if (!isOws(value.charCodeAt(0)) && !isOws(value.charCodeAt(value.length - 1))) return value;
  return value.replace(/^[ \t]+|[ \t]+$/g, '');
}

/** The Base64 sentinel (`=?base64?…?=`) decoded; undefined when it is not canonical Base64 of UTF-8. */
function decodedHeaderValue(value: string): string | undefined {
  if (!value.startsWith('=?base64?') || !value.endsWith('?=')) return value;
  const encoded = value.slice(9, -2);
  if (encoded.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(encoded)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(encoded, 'base64'));
  } catch {
    return undefined;
  }
}

function mismatch(message: string): EnvelopeRefusal {
  return { status: 400, code: HEADER_MISMATCH, message: `Header mismatch: ${message}` };
}

/**
 * Why a modern request whose envelope names `protocolVersion` is refused for its headers or its
 * version, in the revision's order; undefined when it is not.
 */
export function envelopeRefusal(
  headers: IncomingHttpHeaders,
  method: string,
  params: Record<string, unknown>,
  protocolVersion: string,
): EnvelopeRefusal | undefined {
  const versionHeader = trimmed(header(headers, 'mcp-protocol-version'));
  if (versionHeader === undefined) return mismatch('the MCP-Protocol-Version header is required');
  if (versionHeader !== protocolVersion)
    return mismatch(
      `MCP-Protocol-Version header value '${versionHeader}' does not match body value '${protocolVersion}'`,
    );
  const methodHeader = trimmed(header(headers, 'mcp-method'));
  if (methodHeader === undefined) return mismatch('the Mcp-Method header is required');
  if (methodHeader !== method)
    return mismatch(`Mcp-Method header value '${methodHeader}' does not match body value '${method}'`);
  const source = NAME_SOURCE[method];
  const bodyName = source ? params[source] : undefined;
  if (typeof bodyName === 'string') {
    const nameHeader = trimmed(header(headers, 'mcp-name'));
    if (nameHeader === undefined) return mismatch('the Mcp-Name header is required');
    const decoded = decodedHeaderValue(nameHeader);
    if (decoded === undefined) return mismatch('the Mcp-Name header is not valid Base64 of UTF-8');
    if (decoded !== bodyName)
      return mismatch(`Mcp-Name header value '${decoded}' does not match body value '${bodyName}'`);
  }
  if (!MODERN_PROTOCOL_VERSIONS.includes(protocolVersion))
    return {
      status: 400,
      code: UNSUPPORTED_PROTOCOL_VERSION,
      message: 'Unsupported protocol version',
      data: { supported: MODERN_PROTOCOL_VERSIONS, requested: protocolVersion },
    };
  return undefined;
}
