import { Type } from '@sinclair/typebox';
import { recentActivity } from '../../domain/activity/activity.ts';
import { viaOf } from '../../domain/auth/principal.ts';
import { strictObject, Via } from '../schemas.ts';
import { defineOperation } from '../types.ts';

const Input = strictObject({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: '1 to 100 (default 25).' })),
});

const Entry = Type.Object({
  operation: Type.String({ description: 'The operation id (see /openapi.json).' }),
  at: Type.String({ format: 'date-time' }),
  surface: Type.Union([Type.Literal('rest'), Type.Literal('mcp'), Type.Literal('a2a')]),
  token_prefix: Type.String({ description: 'Display prefix of the token that made the call.' }),
  status: Type.Integer({ description: 'HTTP status of the call (the REST equivalent on MCP and A2A).' }),
  outcome: Type.String({
    description:
      "`ok`, `sandbox` (a sandbox token's write, checked and rolled back), or the error code the call ended with.",
  }),
});

const Output = Type.Object({
  ok: Type.Boolean(),
  count: Type.Integer(),
  limit: Type.Integer(),
  events: Type.Array(Entry),
  via: Via,
});

export const getMyActivity = defineOperation<typeof Input.static, typeof Output.static>({
  id: 'getMyActivity',
  method: 'GET',
  path: '/api/activity/me',
  tag: 'account',
  summary: 'What agents did on the member’s behalf',
  description:
    'Every call any of the member’s tokens made, newest first: operation, when, surface, token display prefix and outcome (refused calls included). Diagnostic reads (setup-check, health, capabilities) and reads of this log are not recorded.',
  mcpTool: 'ic_activity_get_recent',
  credential: 'bearer',
  scope: 'membership:read',
  sandbox: 'real',
  idempotent: false,
  recordsActivity: false,
  inputFrom: 'query',
  input: Input,
  output: Output,
  successStatus: 200,
  errors: [
    { status: 400, description: 'limit out of range' },
    { status: 401, description: 'Missing or invalid token' },
    { status: 403, description: 'Token lacks membership:read' },
  ],
  async handler({ input, principal, deps }) {
    const limit = input.limit ?? 25;
    const events = await recentActivity(deps, principal.member.id, limit);
    return { body: { ok: true, count: events.length, limit, events, via: viaOf(principal) } };
  },
});
