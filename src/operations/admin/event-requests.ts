import { Type } from '@sinclair/typebox';
import { decideEventRequest, listEventRequests, publishedEventUrl } from '../../domain/events/proposals.ts';
import { strictObject } from '../schemas.ts';
import { defineOperation } from '../types.ts';
import {
  CONFIRM,
  isoTime,
  LIST_ERRORS,
  listLimit,
  MUTATION_ERRORS,
  MutationOutput,
  OPERATOR_TOOL,
  operatorMutationQuota,
  runOperatorMutation,
} from './operator-mutation.ts';

const SCOPE = 'admin:events_review';

const ListInput = strictObject({
  status: Type.Optional(
    Type.Union([Type.Literal('pending'), Type.Literal('approved'), Type.Literal('declined')], {
      description: 'Default pending.',
    }),
  ),
  limit: listLimit,
});

export const adminListEventRequests = defineOperation<typeof ListInput.static, unknown>({
  ...OPERATOR_TOOL,
  id: 'adminListEventRequests',
  summary: 'List member event proposals',
  description:
    'Operators. Proposals in one status (default pending), newest first, with the proposal as sent.',
  mcpTool: 'ic_admin_event_requests_list',
  scope: SCOPE,
  sandbox: 'real',
  input: ListInput,
  output: Type.Object({
    ok: Type.Literal(true),
    count: Type.Integer(),
    requests: Type.Array(Type.Object({}, { additionalProperties: true })),
  }),
  errors: LIST_ERRORS,
  async handler({ deps, input }) {
    const rows = (await listEventRequests(deps, input.status ?? 'pending')).slice(0, input.limit ?? 50);
    const requests = rows.map((row) => ({
      id: row.id,
      member_id: row.member_id,
      title: row.title,
      start: isoTime(row.start_at),
      status: row.status,
      created_at: isoTime(row.created_at),
      decided_at: isoTime(row.decided_at),
      reason: row.reason,
      details: JSON.parse(row.details) as Record<string, unknown>,
    }));
    return { body: { ok: true, count: requests.length, requests } };
  },
});

const DecideInput = strictObject({
  id: Type.String({ minLength: 1, maxLength: 80, description: 'The proposal id (evr_…).' }),
  decision: Type.Union([Type.Literal('approve'), Type.Literal('decline')]),
  reason: Type.Optional(Type.String({ maxLength: 600, description: 'Told to the member.' })),
  confirm: CONFIRM,
});

export const adminDecideEventRequest = defineOperation<typeof DecideInput.static, unknown>({
  ...OPERATOR_TOOL,
  id: 'adminDecideEventRequest',
  summary: 'Approve or decline a member event proposal',
  description:
    'Operators. A dry run unless confirm is true; a confirmed approval publishes the event into the upcoming list at its own page, a decline tells the member; either appends to the member’s event log, writes the audit row and spends one operator mutation.',
  mcpTool: 'ic_admin_event_request_decide',
  scope: SCOPE,
  sandbox: 'simulated',
  quotas: (deps) => [operatorMutationQuota(deps)],
  bodyLimit: 8 * 1024,
  input: DecideInput,
  output: MutationOutput,
  errors: MUTATION_ERRORS,
  async handler(ctx) {
    const { id, decision, reason } = ctx.input;
    return runOperatorMutation(ctx, {
      action: `event_request.${decision}`,
      target: id,
      detail: { reason },
      act: (scoped, operatorId) => decideEventRequest(scoped, id, decision, operatorId, reason),
      async view(db) {
        const row = await db
          .selectFrom('event_requests')
          .select(['id', 'member_id', 'title', 'status', 'reason', 'event_id'])
          .where('id', '=', id)
          .executeTakeFirst();
        return row && { ...row, event_url: row.event_id ? publishedEventUrl(ctx.deps, id) : null };
      },
    });
  },
});
