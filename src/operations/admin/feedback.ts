import { Type } from '@sinclair/typebox';
import { listFeedback, resolveFeedback } from '../../domain/feedback/triage.ts';
import { feedback } from '../../storage/feedback.ts';
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

const SCOPE = 'admin:feedback_review';

export const adminListFeedback = defineOperatorList({
  id: 'adminListFeedback',
  summary: 'List feedback tickets',
  description:
    'Operators. Tickets in one status (default open), newest first. The sender’s IP hash is not shown.',
  mcpTool: 'ic_admin_feedback_list',
  scope: SCOPE,
  statuses: ['open', 'resolved'],
  defaultStatus: 'open',
  statusDescription: 'Default open.',
  field: 'tickets',
  list: listFeedback,
  view: ({ ip_hash: _hidden, warnings, created_at, ...row }) => ({
    ...row,
    warnings: JSON.parse(warnings) as string[],
    created_at: isoTime(created_at),
  }),
});

const ResolveInput = strictObject({
  ticket_id: Type.String({ minLength: 1, maxLength: 80, description: 'The ticket id (fb_…).' }),
  confirm: CONFIRM,
});

export const adminResolveFeedback = defineOperation<typeof ResolveInput.static, unknown>({
  ...OPERATOR_DECISION,
  id: 'adminResolveFeedback',
  summary: 'Resolve a feedback ticket',
  description:
    'Operators. A dry run unless confirm is true; a confirmed resolve closes the open ticket, writes the audit row and spends one operator mutation.',
  mcpTool: 'ic_admin_feedback_resolve',
  scope: SCOPE,
  sandbox: 'simulated',
  quotas: (deps) => [operatorMutationQuota(deps)],
  bodyLimit: 8 * 1024,
  input: ResolveInput,
  output: MutationOutput,
  errors: MUTATION_ERRORS,
  async handler(ctx) {
    const { ticket_id } = ctx.input;
    return runOperatorMutation(ctx, {
      action: 'feedback.resolve',
      target: ticket_id,
      act: (scoped) => resolveFeedback(scoped, ticket_id),
      view: (db) => feedback.operatorView(db, ticket_id),
    });
  },
});
