import { randomUUID } from 'node:crypto';
import { errorBody, rpcOf } from '../core/error-catalogue.ts';
import { argumentsOverCap } from '../operations/body-cap.ts';
import { chargeAnonymous } from '../operations/pipeline/charge.ts';
import { runOperation } from '../operations/pipeline/run.ts';
import { callWithInput } from '../operations/types.ts';
import { agentInfo, type Capability, capabilitiesOf, capabilityList } from './a2a-card.ts';
import type { MethodContext } from './a2a-context.ts';
import { a2aError, errorData, failureOf, invalidParams, RPC, RpcFailure, rpcCodeFor } from './a2a-errors.ts';
import { isContextId, MAX_CONTEXT_ID } from './a2a-ids.ts';
import { keepTask, TASK_METHODS_0_3, TASK_METHODS_1_0 } from './a2a-tasks.ts';
import { readText, type SkillCall } from './a2a-text.ts';
import type { A2aVersion } from './a2a-version.ts';
import { readParts, renderMessage, renderTask, sendResult, type TaskView } from './a2a-wire.ts';

export type { CallTemplate, MethodContext } from './a2a-context.ts';
export { type RpcError, RpcFailure } from './a2a-errors.ts';

/**
 * Runs one capability through the shared pipeline, exactly as its REST path would, and returns the
 * operation's body (spec §6: the result is the tool's output); a refusal becomes a JSON-RPC error.
 */
async function runCapability(
  context: MethodContext,
  params: SkillCall,
): Promise<{ op: Capability; body: unknown }> {
  const { deps, operations, call, failures } = context;
  if (typeof params.capability !== 'string')
    throw invalidParams(failures, 'params.capability must be a capability name', 'capability');
  if (params.idempotency_key !== undefined && typeof params.idempotency_key !== 'string')
    throw invalidParams(failures, 'params.idempotency_key must be a string', 'idempotency_key');
  const op = capabilitiesOf(operations).find((c: Capability) => c.mcpTool === params.capability);
  if (!op) {
    // Charged like REST's catch-all, so probing for names costs the same as probing for paths.
    await chargeAnonymous(deps, call.ip);
    throw a2aError(
      failures,
      rpcOf('unknown_capability'),
      errorBody('unknown_capability', {
        message:
          typeof params.capability === 'string' && params.capability.length <= 100
            ? `No capability is named ${params.capability}; the agent card lists the skills.`
            : 'params.capability must name a skill; the agent card lists them.',
        extra: { field: 'capability' },
      }),
    );
  }
  const tooLarge = argumentsOverCap(op, deps, params.arguments);
  if (tooLarge) {
    const data = errorData(failures.version, failures.base, tooLarge.body());
    throw new RpcFailure({ code: rpcCodeFor(413), message: tooLarge.message, data });
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
  if (result.status >= 400) throw failureOf(failures, result);
  return { op, body: result.body };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * SendMessage (1.0) and message/send (0.3). A data part {capability, arguments} calls that skill, and
 * so does a text that names one (a2a-text.ts); the call becomes a completed Task, kept for its member.
 * A text that names no skill is answered with a Message that lists the skills.
 */
async function sendMessage(context: MethodContext, version: A2aVersion, params: Record<string, unknown>) {
  const { failures } = context;
  const message = params.message;
  if (!isObject(message) || !Array.isArray(message.parts))
    throw invalidParams(failures, 'params.message with parts is required', 'message');
  const named = nonEmpty(message.contextId);
  // Kept with the task and filtered on by ListTasks: refused before the skill runs, not after.
  if (named !== undefined && !isContextId(named))
    throw invalidParams(
      failures,
      `message.contextId must be up to ${MAX_CONTEXT_ID} characters with no control characters`,
      'message.contextId',
    );
  const contextId = named ?? randomUUID();
  const taskId = nonEmpty(message.taskId);
  if (taskId) {
    // Every task here is complete when it is answered, and a completed task takes no more messages.
    throw a2aError(
      failures,
      rpcOf('task_complete'),
      errorBody('task_complete', { id: taskId, extra: { field: 'message.taskId' } }),
    );
  }
  const parts = readParts(message.parts);
  let skillCall: SkillCall;
  if (parts.data !== undefined) {
    if (!isObject(parts.data))
      throw invalidParams(
        failures,
        'The data part must be an object {capability, arguments}',
        'message.parts',
      );
    skillCall = parts.data as unknown as SkillCall;
  } else {
    const reading = readText(context.operations, parts.texts);
    if ('refused' in reading) throw invalidParams(failures, reading.refused, 'message.parts');
    if ('help' in reading)
      return sendResult(version, 'message', renderMessage(version, { contextId, ...reading.help }));
    skillCall = reading.call;
  }
  const { op, body } = await runCapability(context, skillCall);
  let task: TaskView;
  try {
    task = await keepTask(
      context,
      { contextId, capability: op.mcpTool, result: body },
      op.keepsResult !== false,
    );
  } catch (error) {
    // The operation has run and its effect is committed: an error here would tell the agent it
    // failed and invite a retry that runs it twice. Its result goes back as a Message instead (no
    // task to fetch later), and the failure to keep the task is logged.
    context.call.log?.error(
      { err: error, requestId: context.call.requestId, capability: op.mcpTool },
      'A2A task not kept; its result is answered as a message',
    );
    return sendResult(version, 'message', renderMessage(version, { contextId, data: body }));
  }
  return sendResult(version, 'task', renderTask(version, task));
}

type Method = (context: MethodContext, params: Record<string, unknown>) => Promise<unknown>;

/** Methods both versions answer: the reference's (agent/info, agent/capabilities, tasks/send). */
const REFERENCE_METHODS: Record<string, Method> = {
  'agent/info': async ({ deps }) => agentInfo(deps),
  'agent/capabilities': async ({ operations }) => ({ capabilities: capabilityList(operations) }),
  'tasks/send': async (context, params) =>
    (await runCapability(context, params as unknown as SkillCall)).body,
};

function unsupported(code: number, what: string): Method {
  return async ({ failures }) => {
    throw a2aError(failures, code, errorBody('unsupported_operation', { message: what }));
  };
}
const NO_STREAMING = unsupported(
  RPC.unsupportedOperation,
  'Streaming is not offered (capabilities.streaming is false): use SendMessage, then GetTask.',
);
const NO_PUSH = unsupported(
  RPC.pushNotificationNotSupported,
  'Push notifications are not offered (capabilities.pushNotifications is false).',
);

const METHODS: Record<A2aVersion, Record<string, Method>> = {
  '1.0': {
    ...REFERENCE_METHODS,
    SendMessage: (context, params) => sendMessage(context, '1.0', params),
    ...TASK_METHODS_1_0,
    SendStreamingMessage: NO_STREAMING,
    SubscribeToTask: NO_STREAMING,
    CreateTaskPushNotificationConfig: NO_PUSH,
    GetTaskPushNotificationConfig: NO_PUSH,
    ListTaskPushNotificationConfigs: NO_PUSH,
    DeleteTaskPushNotificationConfig: NO_PUSH,
    GetExtendedAgentCard: unsupported(
      RPC.unsupportedOperation,
      'There is no extended agent card (capabilities.extendedAgentCard is false).',
    ),
  },
  '0.3': {
    ...REFERENCE_METHODS,
    'message/send': (context, params) => sendMessage(context, '0.3', params),
    ...TASK_METHODS_0_3,
    'message/stream': NO_STREAMING,
    'tasks/resubscribe': NO_STREAMING,
    'tasks/pushNotificationConfig/set': NO_PUSH,
    'tasks/pushNotificationConfig/get': NO_PUSH,
    'tasks/pushNotificationConfig/list': NO_PUSH,
    'tasks/pushNotificationConfig/delete': NO_PUSH,
    'agent/getAuthenticatedExtendedCard': unsupported(
      RPC.extendedCardNotConfigured,
      'There is no authenticated extended agent card.',
    ),
  },
};

/** Which version has a method, to say so when a request asks the other one for it. */
function versionHaving(method: string): A2aVersion | undefined {
  return (Object.keys(METHODS) as A2aVersion[]).find((v) => Object.hasOwn(METHODS[v], method));
}

/** Calls a method by name in the negotiated version; unknown names and malformed params are errors. */
export async function callMethod(context: MethodContext, method: string, params: unknown): Promise<unknown> {
  const { version, failures } = context;
  if (typeof version !== 'string') {
    throw a2aError(
      failures,
      rpcOf('version_not_supported'),
      errorBody('version_not_supported', {
        version: version.unsupported,
        extra: { supported_versions: ['1.0', '0.3'] },
      }),
    );
  }
  const run = Object.hasOwn(METHODS[version], method) ? METHODS[version][method] : undefined;
  if (!run) {
    const other = versionHaving(method);
    const hint = other ? ` (${method} is an A2A ${other} method: send the header A2A-Version: ${other})` : '';
    throw new RpcFailure({ code: RPC.methodNotFound, message: `Method not found: ${method}${hint}` });
  }
  if (params !== undefined && !isObject(params))
    throw invalidParams(failures, 'params must be an object (by-name parameters)', 'params');
  return run(context, params ?? {});
}
