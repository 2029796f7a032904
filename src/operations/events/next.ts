import { Type } from '@sinclair/typebox';
import { EVENT_TYPES, readEvents } from '../../domain/eventlog/eventlog.ts';
import { strictObject } from '../schemas.ts';
import { defineOperation } from '../types.ts';

const Input = strictObject({
  since: Type.Optional(
    Type.Integer({ minimum: 0, description: 'Last event id seen; omit to read from the start.' }),
  ),
  types: Type.Optional(
    Type.String({
      maxLength: 1000,
      description: `Comma-separated AgentEventType filter (${EVENT_TYPES.join(', ')}); unknown values are dropped.`,
    }),
  ),
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 500, description: 'Page size, 1 to 500 (default 50).' }),
  ),
});

const Action = Type.Object({
  label: Type.String(),
  mcp_tool: Type.String(),
  args: Type.Record(Type.String(), Type.Unknown()),
  consequential: Type.Boolean(),
});

const LoggedEvent = Type.Object(
  {
    id: Type.Integer(),
    type: Type.String({ description: 'An AgentEventType; tolerate values added later.' }),
    at: Type.String({ format: 'date-time' }),
    actor: Type.Record(Type.String(), Type.Unknown()),
    target: Type.Record(Type.String(), Type.Unknown()),
    payload: Type.Record(Type.String(), Type.Unknown()),
    actions: Type.Array(Action),
  },
  { additionalProperties: true },
);

const Output = Type.Object({
  events: Type.Array(LoggedEvent),
  cursor: Type.Integer(),
  has_more: Type.Boolean(),
  as_of: Type.String({ format: 'date-time' }),
});

export const nextEvents = defineOperation<typeof Input.static, typeof Output.static>({
  id: 'getNextEvents',
  method: 'GET',
  path: '/api/events/next',
  tag: 'account',
  summary: 'Tail the member’s agentic event log',
  description:
    'Browser session only (agents use the MCP verb ic_events_next). Page forward by passing the returned cursor as since while has_more is true. Ids increase by one per reader and never skip.',
  credential: 'session',
  scope: 'membership:read',
  sandbox: 'real',
  idempotent: false,
  inputFrom: 'query',
  input: Input,
  output: Output,
  successStatus: 200,
  errors: [
    { status: 400, description: 'since, types or limit out of range' },
    { status: 401, description: 'No browser session (agent tokens are refused here)' },
  ],
  async handler({ input, principal, deps, now }) {
    if (principal.kind !== 'session') throw new Error('pipeline let a non-session caller through');
    const known = new Set<string>(EVENT_TYPES);
    const types =
      input.types === undefined
        ? undefined
        : input.types
            .split(',')
            .map((t) => t.trim())
            .filter((t) => known.has(t));
    const page = await readEvents(deps.db, principal.member.id, {
      since: input.since ?? 0,
      types,
      limit: input.limit ?? 50,
    });
    return { body: { ...page, as_of: new Date(now).toISOString() } };
  },
});
