import { Type } from '@sinclair/typebox';
import { decideEventRequest, listEventRequests, publishedEventUrl } from '../../domain/events/proposals.ts';
import { eventRequests } from '../../storage/event-requests.ts';
import { strictObject } from '../schemas.ts';
import { defineOperation } from '../types.ts';
import { defineOperatorList } from './operator-list.ts';
import { runOperatorMutation } from './operator-mutation.ts';
import {
  CONFIRM,
  isoTime,
  MUTATION_ERRORS,
  MutationOutput,
  OPERATOR_DECISION,
  operatorMutationQuota,
} from './operator-tool.ts';

const SCOPE = 'admin:events_review';

export const adminListEventRequests = defineOperatorList({
  id: 'adminListEventRequests',
  summary: 'List member event proposals',
  description:
    'Operators. Proposals in one status (default pending), newest first, with the proposal as sent.',
  mcpTool: 'ic_admin_event_requests_list',
  scope: SCOPE,
  statuses: ['pending', 'approved', 'declined'],
  defaultStatus: 'pending',
  statusDescription: 'Default pending.',
  field: 'requests',
  list: listEventRequests,
  view: (row) => ({
    id: row.id,
    member_id: row.member_id,
    title: row.title,
    start: isoTime(row.start_at),
    status: row.status,
    created_at: isoTime(row.created_at),
    decided_at: isoTime(row.decided_at),
    reason: row.reason,
    details: JSON.parse(row.details) as Record<string, unknown>,
  }),
});

const DecideInput = strictObject({
  id: Type.String({ minLength: 1, maxLength: 80, description: 'The proposal id (evr_…).' }),
  decision: Type.Union([Type.Literal('approve'), Type.Literal('decline')]),
  reason: Type.Optional(Type.String({ maxLength: 600, description: 'Told to the member.' })),
  confirm: CONFIRM,
});

export const adminDecideEventRequest = defineOperation<typeof DecideInput.static, unknown>({
  ...OPERATOR_DECISION,
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
        const row = await eventRequests.operatorView(db, id);
        return row && { ...row, event_url: row.event_id ? publishedEventUrl(ctx.deps, id) : null };
      },
    });
  },
});
