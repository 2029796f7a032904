import { randomUUID } from 'node:crypto';
import { iso } from '../clock.ts';
import { type A2aVersion, LEGACY_VERSION } from './a2a-version.ts';

/**
 * The A2A objects as each version writes them. 0.3 tags objects and parts with `kind` and spells
 * states and roles in lower case; 1.0 is ProtoJSON: parts tell their type by member (`text`,
 * `data`), enums are TASK_STATE_… and ROLE_…, and SendMessage wraps its answer in `task` or `message`.
 */

/** A kept task as the surface knows it; stored state is the 0.3 spelling ('completed'). */
export interface TaskView {
  id: string;
  contextId: string;
  capability: string;
  state: string;
  result: unknown;
  /** Read back from storage for a skill that keeps no copy of its answer: the task has no artifact. */
  resultNotKept?: true;
  updatedAt: number;
}

const RESULT_NOT_KEPT_TEXT =
  'The answer of this skill is not kept: it carries what the caller asked. It was given once, in the reply to the message.';

const STATE_1_0: Record<string, string> = {
  submitted: 'TASK_STATE_SUBMITTED',
  working: 'TASK_STATE_WORKING',
  completed: 'TASK_STATE_COMPLETED',
  failed: 'TASK_STATE_FAILED',
  canceled: 'TASK_STATE_CANCELED',
  rejected: 'TASK_STATE_REJECTED',
};

/** The stored spelling of a state a client names (either version's), or undefined if none. */
export function storedState(state: string): string | undefined {
  if (Object.hasOwn(STATE_1_0, state)) return state;
  return Object.keys(STATE_1_0).find((key) => STATE_1_0[key] === state);
}

function dataPart(version: A2aVersion, data: unknown) {
  return version === LEGACY_VERSION ? { kind: 'data', data } : { data, mediaType: 'application/json' };
}

function textPart(version: A2aVersion, text: string) {
  return version === LEGACY_VERSION ? { kind: 'text', text } : { text, mediaType: 'text/plain' };
}

/** A Task: the call's result is its one artifact, a data part holding the operation's answer. */
export function renderTask(version: A2aVersion, task: TaskView, includeArtifacts = true) {
  const legacy = version === LEGACY_VERSION;
  const artifacts = [
    {
      artifactId: `${task.id}-result`,
      name: task.capability,
      parts: [dataPart(version, task.result)],
    },
  ];
  const notKept = task.resultNotKept === true;
  return {
    ...(legacy ? { kind: 'task' } : {}),
    id: task.id,
    contextId: task.contextId,
    status: {
      state: legacy ? task.state : (STATE_1_0[task.state] ?? task.state),
      timestamp: iso(task.updatedAt),
      ...(notKept
        ? {
            message: renderMessage(version, {
              contextId: task.contextId,
              taskId: task.id,
              text: RESULT_NOT_KEPT_TEXT,
            }),
          }
        : {}),
    },
    ...(includeArtifacts && !notKept ? { artifacts } : {}),
    metadata: { capability: task.capability },
  };
}

export interface Reply {
  contextId?: string;
  taskId?: string;
  text?: string;
  data?: unknown;
}

/** An agent Message (the answer to a message that is not a skill call). */
export function renderMessage(version: A2aVersion, reply: Reply) {
  const parts = [
    ...(reply.text === undefined ? [] : [textPart(version, reply.text)]),
    ...(reply.data === undefined ? [] : [dataPart(version, reply.data)]),
  ];
  return {
    ...(version === LEGACY_VERSION ? { kind: 'message' } : {}),
    messageId: randomUUID(),
    role: version === LEGACY_VERSION ? 'agent' : 'ROLE_AGENT',
    parts,
    ...(reply.contextId ? { contextId: reply.contextId } : {}),
    ...(reply.taskId ? { taskId: reply.taskId } : {}),
  };
}

/** What SendMessage / message/send answers: 1.0 wraps it in `task` or `message`, 0.3 does not. */
export function sendResult(version: A2aVersion, kind: 'task' | 'message', value: unknown) {
  if (version === LEGACY_VERSION) return value;
  // Two plain literals rather than `{ [kind]: value }`: V8 may define a computed key in its runtime.
  return kind === 'task' ? { task: value } : { message: value };
}

export interface IncomingParts {
  data?: unknown;
  texts: string[];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The first data part and every text part of a message. Either version's part shape is read
 * (`kind` or a member), so a client that mixes them is still understood.
 */
export function readParts(parts: unknown[]): IncomingParts {
  const read: IncomingParts = { texts: [] };
  for (const part of parts) {
    if (!isObject(part)) continue;
    if (part.kind === 'data' || (part.kind === undefined && Object.hasOwn(part, 'data'))) {
      if (read.data === undefined) read.data = part.data;
    } else if ((part.kind === 'text' || part.kind === undefined) && typeof part.text === 'string') {
      read.texts.push(part.text);
    }
  }
  return read;
}
