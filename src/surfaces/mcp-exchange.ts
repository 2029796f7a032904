// What one POST to the MCP endpoint does around its tool calls, in either protocol era
// (mcp-server-pool.ts serves 2025-11-25 and earlier, mcp-modern.ts 2026-07-28): each tools/call runs
// the one operation pipeline, and the HTTP answer carries what the calls report (the 401 challenge,
// the scope challenge, the rate-limit headers). Nothing here loads the MCP SDK.
import { challengeForAnswer } from '../http/bearer-challenge.ts';
import { rateKeyForIp } from '../http/client.ts';
import { argumentsOverCap } from '../operations/body-cap.ts';
import { renderError } from '../operations/pipeline/answer.ts';
import { chargeAnonymous } from '../operations/pipeline/charge.ts';
import { runOperation } from '../operations/pipeline/run.ts';
import type { Deps } from '../operations/services.ts';
import type { Operation } from '../operations/types.ts';
import { scopeChallengeFor } from './mcp-credentials.ts';
import { jsonRpcError } from './mcp-json-rpc.ts';
import { type ToolOperation, toolResult } from './mcp-tools.ts';
import { callRequestFrom, type HttpRequestView, JSON_TYPE, type WholeAnswer } from './rest.ts';

/** Headers of a tool call's pipeline result that also belong on the HTTP response. */
const FORWARDED_HEADERS =
  /^(ratelimit|ratelimit-policy|ratelimit-limit|ratelimit-remaining|ratelimit-reset|retry-after)$/;

/** What the tool calls of one HTTP request report back to the HTTP layer. */
export interface Exchange {
  /** The challenge of the first tool call refused 401 (with invalid_token when a token was refused). */
  unauthorized?: string;
  /** Whether any tools/call ran: each is charged by the pipeline, the exchange then is not. */
  ranTool: boolean;
  headers: Record<string, string>;
  /** The challenge for a scope the member could grant on re-authorizing (mcp-credentials.ts). */
  scopeChallenge?: string;
}

export function header(request: HttpRequestView, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** A foreign Origin (DNS rebinding) is refused before anything else, in either era. */
export function originRefusal(request: HttpRequestView, allowedOrigins: ReadonlySet<string>) {
  const origin = header(request, 'origin');
  if (origin !== undefined && !allowedOrigins.has(origin))
    return jsonRpcError(403, `Forbidden: Origin ${origin} is not allowed.`);
  return undefined;
}

/**
 * One tools/call of a known tool, run through the pipeline as REST runs it: the arguments' size cap,
 * the bearer (never a browser cookie riding along), and the result as an MCP tool result.
 */
export async function runToolCall(
  deps: Deps,
  operations: readonly Operation[],
  op: ToolOperation,
  args: Record<string, unknown>,
  request: HttpRequestView,
  exchange: Exchange,
) {
  exchange.ranTool = true;
  const tooLarge = argumentsOverCap(op, deps, args, Buffer.byteLength(String(request.body ?? '')));
  if (tooLarge) return toolResult(renderError(tooLarge, { requestId: request.id }));
  const callRequest = callRequestFrom(request, args, operations, 'mcp', false);
  const result = await runOperation(deps, op, callRequest);
  if (result.status === 401)
    exchange.unauthorized ??= challengeForAnswer(deps.config.publicUrl, 'mcp', result.body);
  if (result.status === 403) exchange.scopeChallenge ??= await scopeChallengeFor(deps, request, result);
  for (const [name, value] of Object.entries(result.headers)) {
    if (FORWARDED_HEADERS.test(name)) exchange.headers[name] = value;
  }
  return toolResult(result);
}

/**
 * The HTTP answer of an exchange whose JSON-RPC answer is `answer`: an exchange that ran no tool
 * (discovery, tools/list and the like) is charged like any anonymous call, per IP.
 */
export async function finishExchange(
  deps: Deps,
  request: HttpRequestView,
  exchange: Exchange,
  answer: { status: number; body?: string },
): Promise<WholeAnswer> {
  const headers: Record<string, string> = {};
  if (!exchange.ranTool) {
    const charged = await chargeAnonymous(deps, rateKeyForIp(request.ip));
    Object.assign(headers, charged.headers);
    if (charged.refusal) {
      const { status, message } = charged.refusal;
      const failure = jsonRpcError(status, message);
      Object.assign(headers, charged.refusal.headers(), { 'content-type': JSON_TYPE });
      return { status, headers, body: failure.body };
    }
  }
  Object.assign(headers, exchange.headers);
  let status = answer.status;
  // A member tool refused for a missing or refused token is an HTTP 401 with a challenge pointing
  // at the protected-resource metadata (error="invalid_token" when a token was refused), while the
  // body still carries the in-band result. A bad token on discovery, tools/list or a public tool
  // is read as no token, as on REST and A2A (docs/decisions.md, "A bad bearer on a public call").
  if (exchange.unauthorized) {
    status = 401;
    headers['www-authenticate'] = exchange.unauthorized;
  }
  // Tool errors stay in-band (reference §5); the challenge says a re-authorization could cure it.
  else if (exchange.scopeChallenge) headers['www-authenticate'] = exchange.scopeChallenge;
  const version = header(request, 'mcp-protocol-version');
  if (version) headers['mcp-protocol-version'] = version;
  if (answer.body === undefined) return { status, headers };
  headers['content-type'] = JSON_TYPE;
  return { status, headers, body: answer.body };
}
