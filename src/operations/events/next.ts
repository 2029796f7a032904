import { Type } from '@sinclair/typebox';
import { EVENT_TYPES, knownEventTypes, readEvents } from '../../domain/eventlog/eventlog.ts';
import { strictObject } from '../schemas.ts';
import type { Deps } from '../services.ts';
import { defineOperation } from '../types.ts';

const SINCE = Type.Optional(
  Type.Integer({ minimum: 0, description: 'Last event id seen; omit to read from the start.' }),
);
const LIMIT = Type.Optional(
  Type.Integer({ minimum: 1, maximum: 500, description: 'Page size, 1 to 500 (default 50).' }),
);

/** GET /api/events/next: `types` is a comma-separated query value. */
const QueryInput = strictObject({
  since: SINCE,
  types: Type.Optional(
    Type.String({
      maxLength: 1000,
      description: `Comma-separated AgentEventType filter (${EVENT_TYPES.join(', ')}); unknown values are dropped.`,
    }),
  ),
  limit: LIMIT,
});

/** ic_events_next: the same fields, `types` as an array. */
const ToolInput = strictObject({
  since: SINCE,
  types: Type.Optional(
    Type.Array(Type.String({ maxLength: 100 }), {
      maxItems: 50,
      description: `AgentEventType filter (${EVENT_TYPES.join(', ')}); unknown values are dropped.`,
    }),
  ),
  limit: LIMIT,
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
  pruned_through: Type.Optional(
    Type.Integer({
      description:
        'Present only when records after since were deleted by retention: the last id no longer kept. events starts at the oldest kept record; state those records told of must be read afresh.',
    }),
  ),
});

const ERRORS_400 = { status: 400, description: 'since, types or limit out of range' };
const DESCRIPTION =
  'Page forward by passing the returned cursor as since while has_more is true. Ids increase by one per reader and never skip. With types, the cursor is the last id the read covered, records of other types included. A since older than the oldest kept record (retention deletes old ones) is answered from the oldest kept on, with pruned_through.';

/** One page of the member's event log, as both the REST read and the tool answer it. */
async function eventPage(
  deps: Deps,
  memberId: string,
  query: { since?: number; types?: readonly string[]; limit?: number },
  now: number,
): Promise<typeof Output.static> {
  const types = knownEventTypes(query.types);
  const page = await readEvents(deps.db, memberId, {
    since: query.since ?? 0,
    types,
    limit: query.limit ?? 50,
  });
  return { ...page, as_of: new Date(now).toISOString() };
}

export const nextEvents = defineOperation<typeof QueryInput.static, typeof Output.static>({
  id: 'getNextEvents',
  method: 'GET',
  path: '/api/events/next',
  tag: 'account',
  summary: 'Tail the member’s agentic event log',
  description: `Browser session only (agents use the MCP verb ic_events_next). ${DESCRIPTION}`,
  credential: 'session',
  scope: 'membership:read',
  sandbox: 'real',
  idempotent: false,
  inputFrom: 'query',
  input: QueryInput,
  output: Output,
  successStatus: 200,
  errors: [ERRORS_400, { status: 401, description: 'No browser session (agent tokens are refused here)' }],
  async handler({ input, principal, deps, now }) {
    const types = input.types?.split(',');
    const body = await eventPage(deps, principal.member.id, { ...input, types }, now);
    return { body };
  },
});

export const nextEventsTool = defineOperation<typeof ToolInput.static, typeof Output.static>({
  id: 'agentNextEvents',
  method: 'POST',
  tag: 'account',
  summary: 'Tail the member’s agentic event log',
  description: `Agent bearer; the same read as GET /api/events/next, with types as an array. ${DESCRIPTION}`,
  mcpTool: 'ic_events_next',
  credential: 'bearer',
  scope: 'membership:read',
  sandbox: 'real',
  idempotent: false,
  inputFrom: 'body',
  input: ToolInput,
  output: Output,
  successStatus: 200,
  errors: [ERRORS_400, { status: 401, description: 'Missing, unknown or revoked token' }],
  async handler({ input, principal, deps, now }) {
    return { body: await eventPage(deps, principal.member.id, input, now) };
  },
});
