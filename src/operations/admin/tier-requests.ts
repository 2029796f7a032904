import { Type } from '@sinclair/typebox';
import { decideTierRequest, listTierRequests } from '../../domain/members/tier-requests.ts';
import { tierRequests } from '../../storage/tier-requests.ts';
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

const SCOPE = 'admin:tier_review';
const STATUSES = ['pending', 'approved', 'denied', 'cancelled', 'superseded', 'changed'];

export const adminListTierRequests = defineOperatorList({
  id: 'adminListTierRequests',
  summary: 'List tier requests',
  description: 'Operators. Tier requests in one status (default pending), oldest first.',
  mcpTool: 'ic_admin_tier_requests_list',
  scope: SCOPE,
  statuses: STATUSES,
  defaultStatus: 'pending',
  statusDescription: 'Default pending.',
  field: 'requests',
  list: listTierRequests,
  view: (row) => ({
    id: row.id,
    member_id: row.member_id,
    tier: row.tier,
    note: row.note,
    status: row.status,
    created_at: isoTime(row.created_at),
    decided_at: isoTime(row.decided_at),
    granted_tier: row.granted_tier,
    reason: row.reason,
  }),
});

const DecideInput = strictObject({
  id: Type.String({ minLength: 1, maxLength: 80, description: 'The tier request id.' }),
  decision: Type.Union([Type.Literal('approve'), Type.Literal('deny')]),
  tier: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 40,
      description: 'On approve: grant this tier instead of the one asked for.',
    }),
  ),
  reason: Type.Optional(Type.String({ maxLength: 600, description: 'On deny: told to the member.' })),
  confirm: CONFIRM,
});

export const adminDecideTierRequest = defineOperation<typeof DecideInput.static, unknown>({
  ...OPERATOR_DECISION,
  id: 'adminDecideTierRequest',
  summary: 'Approve or deny a tier request',
  description:
    'Operators. A dry run unless confirm is true; a confirmed decision changes the member’s tier (on approve), appends tier_approved or tier_denied to their event log, writes the operator audit row and spends one operator mutation.',
  mcpTool: 'ic_admin_tier_request_decide',
  scope: SCOPE,
  sandbox: 'simulated',
  quotas: (deps) => [operatorMutationQuota(deps)],
  bodyLimit: 8 * 1024,
  input: DecideInput,
  output: MutationOutput,
  errors: MUTATION_ERRORS,
  async handler(ctx) {
    const { id, decision, tier, reason } = ctx.input;
    return runOperatorMutation(ctx, {
      action: `tier_request.${decision}`,
      target: id,
      detail: decision === 'approve' ? { tier } : { reason },
      act: (scoped, operatorId) =>
        decideTierRequest(
          scoped,
          id,
          operatorId,
          decision === 'approve' ? { decision, tier } : { decision, reason },
        ),
      view: (db) => tierRequests.decisionView(db, id),
    });
  },
});
