import { errorBody } from '../core/error-catalogue.ts';
import { RPC, rpcCodeFor } from '../core/json-rpc-codes.ts';
import type { CallResult } from '../operations/pipeline/answer.ts';
import { type A2aVersion, LEGACY_VERSION } from './a2a-version.ts';

/** A JSON-RPC error object; `data` carries the spec's Error body (wrapped for A2A 1.0). */
export interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

/** An error that must also travel at the HTTP level: a 401 with its WWW-Authenticate challenge. */
export interface HttpLevel {
  status: number;
  headers: Record<string, string>;
}

/** Thrown by a method to answer with a JSON-RPC error instead of a result. */
export class RpcFailure extends Error {
  readonly rpc: RpcError;
  readonly http?: HttpLevel;

  constructor(rpc: RpcError, http?: HttpLevel) {
    super(rpc.message);
    this.rpc = rpc;
    this.http = http;
  }
}

export { RPC, rpcCodeFor };

const ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo';

/** Where the Error body's own type is described, for the `@type` A2A 1.0 asks of each detail. */
export function errorBodyType(base: string): string {
  return `${base}/docs#error-body`;
}

/**
 * `error.data` for a version: 0.3 (and the reference's methods) carries the Error body as it is;
 * 1.0 wants an array of typed details (§9.5), so the body goes in as one, after a google.rpc
 * ErrorInfo that names its reason.
 */
export function errorData(version: A2aVersion, base: string, body: Record<string, unknown>): unknown {
  if (version === LEGACY_VERSION) return body;
  const metadata: Record<string, string> = {};
  for (const [key, value] of Object.entries(body))
    if (typeof value === 'string' || typeof value === 'number') metadata[key] = String(value);
  const reason = String(body.error ?? 'error').toUpperCase();
  return [
    { '@type': ERROR_INFO, reason, domain: new URL(base).host, metadata },
    { '@type': errorBodyType(base), ...body },
  ];
}

/** The Error body inside `error.data`, whichever version shaped it. */
export function errorBodyOf(data: unknown): Record<string, unknown> | undefined {
  if (Array.isArray(data)) return data.find((d) => typeof d?.error === 'string');
  return typeof data === 'object' && data !== null ? (data as Record<string, unknown>) : undefined;
}

export interface FailureContext {
  version: A2aVersion;
  base: string;
  /** The 401 challenge for an answer body (the OAuth protected-resource metadata of /api/a2a). */
  challenge: (body: unknown) => string;
}

/** An operation's refusal as a JSON-RPC error; a 401 also becomes an HTTP 401 with its challenge. */
export function failureOf(context: FailureContext, result: CallResult): RpcFailure {
  const body = (result.body ?? {}) as Record<string, unknown>;
  const message = typeof body.message === 'string' ? body.message : String(body.error ?? 'failed');
  const rpc = {
    code: rpcCodeFor(result.status),
    message,
    data: errorData(context.version, context.base, body),
  };
  if (result.status !== 401) return new RpcFailure(rpc);
  return new RpcFailure(rpc, { status: 401, headers: { 'www-authenticate': context.challenge(body) } });
}

/** A refusal of the request's own params (-32602), with an Error body naming the field. */
export function invalidParams(context: FailureContext, message: string, field: string): RpcFailure {
  const body = errorBody('invalid_params', { message, extra: { field } });
  return new RpcFailure({
    code: RPC.invalidParams,
    message,
    data: errorData(context.version, context.base, body),
  });
}

/**
 * One of A2A's own errors (task not found, unsupported operation…): the JSON-RPC code (the
 * catalogue's `rpcOf`) with the Error body (`errorBody`) in `data` and its message as the error's.
 */
export function a2aError(context: FailureContext, code: number, body: Record<string, unknown>): RpcFailure {
  return new RpcFailure({
    code,
    message: String(body.message),
    data: errorData(context.version, context.base, body),
  });
}
