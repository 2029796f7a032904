import { randomUUID } from 'node:crypto';
import { MS } from '../clock.ts';
import { apiError, errorBody, rpcOf } from '../core/error-catalogue.ts';
import type { ApiError } from '../core/errors.ts';
import { renderError } from '../operations/pipeline/answer.ts';
import { authenticate } from '../operations/pipeline/authenticate.ts';
import { charge, defaultPolicies, rateLimitedError } from '../operations/pipeline/charge.ts';
import { callWithInput } from '../operations/types.ts';
import { type A2aTaskRow, findA2aTask, listA2aTasks, saveA2aTask } from '../storage/a2a-tasks.ts';
import type { MethodContext } from './a2a-context.ts';
import { a2aError, failureOf, invalidParams } from './a2a-errors.ts';
import { isContextId, isTaskId, MAX_CONTEXT_ID, pagePosition } from './a2a-ids.ts';
import type { A2aVersion } from './a2a-version.ts';
import { renderTask, storedState, type TaskView } from './a2a-wire.ts';

/** How long a task stays readable after its call (docs/a2a.md): long enough to poll, short enough to keep the table small. */
export const TASK_RETENTION_MS = 7 * MS.day;
const PAGE_SIZE = { default: 50, max: 100 } as const;

function refusal(context: MethodContext, error: ApiError) {
  return failureOf(context.failures, renderError(error, context.call));
}

/**
 * The member a task method acts for. Tasks belong to the member whose token made the call, so these
 * methods take that token: none, or one refused, is a 401 with the challenge; each call is charged
 * to the token's default rate limit.
 */
async function memberOf(context: MethodContext): Promise<string> {
  const { deps, call } = context;
  if (call.authorization === undefined)
    throw refusal(
      context,
      apiError('missing_token', {
        message:
          'Tasks are readable only by the member who made the call: send its agent token as "Authorization: Bearer agt_…".',
      }),
    );
  const now = deps.clock.now();
  const auth = await authenticate(deps, callWithInput(call, undefined), now);
  if (auth.problem) throw refusal(context, auth.problem);
  if (auth.principal.kind !== 'bearer')
    throw refusal(context, apiError('missing_token', { message: 'Send an agent token.' }));
  const charged = await charge(deps, [defaultPolicies(deps).token], auth.principal, call.ip, now);
  if (charged.exceeded) throw refusal(context, rateLimitedError(charged.exceeded));
  return auth.principal.member.id;
}

/** The member behind a call that already passed the pipeline, or undefined when it was anonymous. */
export async function callerOf(context: MethodContext): Promise<string | undefined> {
  const { deps, call } = context;
  if (call.authorization === undefined) return undefined;
  const auth = await authenticate(deps, callWithInput(call, undefined), deps.clock.now());
  return auth.principal.kind === 'bearer' ? auth.principal.member.id : undefined;
}

/** The stored result of a task whose skill keeps no copy of its answer (Operation.keepsResult). */
const RESULT_NOT_KEPT = 'null';

function viewOf(row: A2aTaskRow): TaskView {
  const dropped = row.result === RESULT_NOT_KEPT;
  return {
    id: row.id,
    contextId: row.context_id,
    capability: row.capability,
    state: row.state,
    result: dropped ? undefined : JSON.parse(row.result),
    ...(dropped ? { resultNotKept: true as const } : {}),
    updatedAt: row.updated_at,
  };
}

/**
 * A completed skill call as a task. It is kept for the member who made it; an anonymous call (a
 * public skill without a token) still gets a task id, but no one could prove it theirs, so none is
 * kept. A skill whose answer carries what the caller asked (`keepsResult: false`: research echoes
 * the question) keeps the task without its answer, which only the SendMessage reply carries.
 */
export async function keepTask(
  context: MethodContext,
  call: { contextId: string; capability: string; result: unknown },
  keepsResult = true,
): Promise<TaskView> {
  const { deps } = context;
  const now = deps.clock.now();
  const task: TaskView = { id: randomUUID(), state: 'completed', updatedAt: now, ...call };
  const memberId = await callerOf(context);
  if (memberId) {
    await saveA2aTask(
      deps,
      {
        id: task.id,
        member_id: memberId,
        context_id: task.contextId,
        capability: task.capability,
        state: task.state,
        result: keepsResult ? JSON.stringify(task.result ?? null) : RESULT_NOT_KEPT,
        created_at: now,
        updated_at: now,
        expires_at: now + TASK_RETENTION_MS,
      },
      now,
    );
  }
  return task;
}

/** TaskNotFoundError; the id is named only when it is one this server could have given. */
function taskNotFound(context: MethodContext, id: string) {
  const named = isTaskId(id) ? `No task ${id} is kept` : 'No task with that id is kept (task ids are UUIDs)';
  return a2aError(
    context.failures,
    rpcOf('task_not_found'),
    errorBody('task_not_found', {
      message: `${named} for this member (unknown, another member's, or past its ${TASK_RETENTION_MS / MS.day}-day retention).`,
    }),
  );
}

async function ownTask(context: MethodContext, params: Record<string, unknown>): Promise<TaskView> {
  if (typeof params.id !== 'string' || params.id === '')
    throw invalidParams(context.failures, 'params.id must be a task id', 'id');
  const memberId = await memberOf(context);
  // An id this server could not have given names no task, and is not looked up (A2A: TaskNotFoundError).
  if (!isTaskId(params.id)) throw taskNotFound(context, params.id);
  const row = await findA2aTask(context.deps.db, params.id, memberId, context.deps.clock.now());
  if (!row) throw taskNotFound(context, params.id);
  return viewOf(row);
}

function getTask(version: A2aVersion) {
  return async (context: MethodContext, params: Record<string, unknown>) =>
    renderTask(version, await ownTask(context, params));
}

/** Every task is complete by the time its id is known, so none can be canceled (A2A §3.1.5). */
function cancelTask() {
  return async (context: MethodContext, params: Record<string, unknown>): Promise<never> => {
    const task = await ownTask(context, params);
    throw a2aError(
      context.failures,
      rpcOf('task_not_cancelable'),
      errorBody('task_not_cancelable', { id: task.id, state: task.state }),
    );
  };
}

function cursorOf(row: A2aTaskRow): string {
  return Buffer.from(`${row.updated_at}:${row.id}`).toString('base64url');
}

function afterCursor(token: unknown): { updatedAt: number; id: string } | undefined | null {
  if (token === undefined || token === '') return undefined;
  return typeof token === 'string' ? pagePosition(token) : null;
}

/** The contextId filter: absent, or one a task could have been kept under; null when it cannot be. */
function contextFilter(contextId: unknown): string | undefined | null {
  if (contextId === undefined || contextId === '') return undefined;
  return typeof contextId === 'string' && isContextId(contextId) ? contextId : null;
}

/** ListTasks (1.0 only): the member's kept tasks, most recently updated first, by cursor. */
async function listTasks(context: MethodContext, params: Record<string, unknown>) {
  const { failures } = context;
  const size = params.pageSize ?? PAGE_SIZE.default;
  if (typeof size !== 'number' || !Number.isInteger(size) || size < 1 || size > PAGE_SIZE.max)
    throw invalidParams(
      failures,
      `params.pageSize must be an integer from 1 to ${PAGE_SIZE.max}`,
      'pageSize',
    );
  const after = afterCursor(params.pageToken);
  if (after === null)
    throw invalidParams(failures, 'params.pageToken is not a token this server gave', 'pageToken');
  const state =
    params.status === undefined || params.status === 'TASK_STATE_UNSPECIFIED'
      ? undefined
      : typeof params.status === 'string'
        ? storedState(params.status)
        : undefined;
  if (params.status !== undefined && params.status !== 'TASK_STATE_UNSPECIFIED' && !state)
    throw invalidParams(failures, 'params.status must be a TaskState such as TASK_STATE_COMPLETED', 'status');
  const since =
    typeof params.statusTimestampAfter === 'string' ? Date.parse(params.statusTimestampAfter) : undefined;
  if (since !== undefined && Number.isNaN(since))
    throw invalidParams(
      failures,
      'params.statusTimestampAfter must be an ISO 8601 timestamp',
      'statusTimestampAfter',
    );
  const contextId = contextFilter(params.contextId);
  if (contextId === null)
    throw invalidParams(
      failures,
      `params.contextId must be a context id: up to ${MAX_CONTEXT_ID} characters, no control characters`,
      'contextId',
    );
  const memberId = await memberOf(context);
  const { rows, total } = await listA2aTasks(context.deps.db, {
    memberId,
    now: context.deps.clock.now(),
    contextId,
    state,
    updatedAfter: since,
    after,
    limit: size + 1,
  });
  const page = rows.slice(0, size);
  return {
    tasks: page.map((row) => renderTask('1.0', viewOf(row), params.includeArtifacts === true)),
    nextPageToken: rows.length > size ? cursorOf(page[page.length - 1]) : '',
    pageSize: size,
    totalSize: total,
  };
}

export const TASK_METHODS_1_0 = { GetTask: getTask('1.0'), ListTasks: listTasks, CancelTask: cancelTask() };
export const TASK_METHODS_0_3 = { 'tasks/get': getTask('0.3'), 'tasks/cancel': cancelTask() };
