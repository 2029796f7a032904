import { randomUUID } from 'node:crypto';
import type { Deps } from '../deps.ts';
import { type CallResult, chargeAnonymous, runOperation } from '../http/pipeline.ts';
import { argumentsOverCap } from '../operations/body-cap.ts';
import { type CallRequest, callWithInput, type Operation } from '../operations/types.ts';
import { agentInfo, type Capability, capabilitiesOf, capabilityList } from './a2a-card.ts';

/** A JSON-RPC error object; `data` carries the spec's Error body when an operation refused. */
export interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

/** Thrown by a method to answer with a JSON-RPC error instead of a result. */
export class RpcFailure extends Error {
  constructor(readonly rpc: RpcError) {
    super(rpc.message);
  }
}

export const RPC = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internal: -32603,
  /** Server-defined codes (-32000…-32099) for the refusals REST tells apart by status. */
  otherClientError: -32000,
  unauthorized: -32001,
  forbidden: -32003,
  notFound: -32004,
  rateLimited: -32029,
} as const;

/** The HTTP-free parts of the call: everything the pipeline needs besides the input. */
export type CallTemplate = Omit<CallRequest, 'input' | 'idempotencyKey'>;

export interface MethodContext {
  deps: Deps;
  operations: readonly Operation[];
  call: CallTemplate;
  /** Set for a single (unbatched) request: the operation's RateLimit headers go on the HTTP reply. */
  rateHeaders?: Record<string, string>;
}

/** The JSON-RPC code for an operation's HTTP refusal, so clients branch as they would on the status. */
export function rpcCodeFor(status: number): number {
  if (status === 401) return RPC.unauthorized;
  if (status === 403) return RPC.forbidden;
  if (status === 400) return RPC.invalidParams;
  if (status === 404) return RPC.notFound;
  if (status === 429) return RPC.rateLimited;
  if (status >= 500) return RPC.internal;
  return RPC.otherClientError;
}

function failureOf(result: CallResult): RpcFailure {
  const body = (result.body ?? {}) as { message?: unknown; error?: unknown };
  const message = typeof body.message === 'string' ? body.message : String(body.error ?? 'failed');
  return new RpcFailure({ code: rpcCodeFor(result.status), message, data: body });
}

function invalidParams(message: string, field: string): RpcFailure {
  return new RpcFailure({
    code: RPC.invalidParams,
    message,
    data: { error: 'invalid_params', error_kind: 'validation', field, message },
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

interface TaskParams {
  capability: unknown;
  arguments?: unknown;
  idempotency_key?: unknown;
}

/**
 * Runs one capability through the shared pipeline, exactly as its REST path would, and returns the
 * operation's body (spec §6: the result is the tool's output); a refusal becomes a JSON-RPC error.
 */
async function runCapability(context: MethodContext, params: TaskParams): Promise<unknown> {
  const { deps, operations, call } = context;
  if (typeof params.capability !== 'string')
    throw invalidParams('params.capability must be a capability name', 'capability');
  if (params.idempotency_key !== undefined && typeof params.idempotency_key !== 'string')
    throw invalidParams('params.idempotency_key must be a string', 'idempotency_key');
  const op = capabilitiesOf(operations).find((c: Capability) => c.mcpTool === params.capability);
  if (!op) {
    // Charged like REST's catch-all, so probing for names costs the same as probing for paths.
    await chargeAnonymous(deps, call.ip);
    throw new RpcFailure({
      code: RPC.invalidParams,
      message: `No capability is named ${params.capability}; agent/capabilities lists them.`,
      data: { error: 'unknown_capability', error_kind: 'not_found', field: 'capability' },
    });
  }
  const tooLarge = argumentsOverCap(op, deps, params.arguments);
  if (tooLarge) {
    throw new RpcFailure({ code: RPC.otherClientError, message: tooLarge.message, data: tooLarge.body() });
  }
  const result = await runOperation(
    deps,
    op,
    callWithInput(call, params.arguments, params.idempotency_key as string | undefined),
  );
  if (context.rateHeaders) {
    for (const [name, value] of Object.entries(result.headers))
      if (name.startsWith('ratelimit')) context.rateHeaders[name] = value;
  }
  if (result.status >= 400) throw failureOf(result);
  return result.body;
}

/** `message/send` (A2A 0.3): the first data part carries {capability, arguments}; the answer is a Message. */
async function sendMessage(context: MethodContext, params: Record<string, unknown>) {
  const message = params.message;
  if (!isObject(message) || !Array.isArray(message.parts))
    throw invalidParams('params.message with parts is required', 'message');
  const part = message.parts.find((p: unknown) => isObject(p) && p.kind === 'data' && isObject(p.data));
  if (!part) throw invalidParams('message.parts needs a data part {capability, arguments}', 'message.parts');
  const body = await runCapability(context, (part as { data: TaskParams }).data);
  return {
    kind: 'message',
    messageId: randomUUID(),
    role: 'agent',
    parts: [{ kind: 'data', data: body }],
    ...(typeof message.contextId === 'string' ? { contextId: message.contextId } : {}),
    ...(typeof message.taskId === 'string' ? { taskId: message.taskId } : {}),
  };
}

type Method = (context: MethodContext, params: Record<string, unknown>) => Promise<unknown>;

const METHODS: Record<string, Method> = {
  'agent/info': async ({ deps }) => agentInfo(deps),
  'agent/capabilities': async ({ operations }) => ({ capabilities: capabilityList(operations) }),
  'tasks/send': (context, params) => runCapability(context, params as unknown as TaskParams),
  'message/send': sendMessage,
};

/** Calls a method by name; unknown names and malformed params are JSON-RPC errors. */
export async function callMethod(context: MethodContext, method: string, params: unknown): Promise<unknown> {
  const run = Object.hasOwn(METHODS, method) ? METHODS[method] : undefined;
  if (!run) throw new RpcFailure({ code: RPC.methodNotFound, message: `Method not found: ${method}` });
  if (params !== undefined && !isObject(params))
    throw invalidParams('params must be an object (by-name parameters)', 'params');
  return run(context, params ?? {});
}
