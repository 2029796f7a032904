import { Type } from '@sinclair/typebox';
import { decideHighlight, listHighlights } from '../../domain/highlights/highlights.ts';
import { highlights } from '../../storage/highlights.ts';
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

const SCOPE = 'admin:highlights_review';

export const adminListHighlights = defineOperatorList({
  id: 'adminListHighlights',
  summary: 'List highlight stories',
  description:
    'Operators. Stories in one status (default pending), newest first, with the story as submitted.',
  mcpTool: 'ic_admin_highlights_list',
  scope: SCOPE,
  statuses: ['pending', 'active', 'rejected'],
  defaultStatus: 'pending',
  statusDescription: 'Default pending (waiting stories, expired ones included until moderated or purged).',
  field: 'highlights',
  list: listHighlights,
  view: (row) => ({
    id: row.id,
    member_id: row.member_id,
    status: row.status,
    submitted_at: isoTime(row.submitted_at),
    expires_at: isoTime(row.expires_at),
    decided_at: isoTime(row.decided_at),
    story: JSON.parse(row.story) as Record<string, unknown>,
  }),
});

const DecideInput = strictObject({
  id: Type.String({ minLength: 1, maxLength: 200, description: 'The story id.' }),
  decision: Type.Union([Type.Literal('approve'), Type.Literal('reject')]),
  confirm: CONFIRM,
});

export const adminDecideHighlight = defineOperation<typeof DecideInput.static, unknown>({
  ...OPERATOR_DECISION,
  id: 'adminDecideHighlight',
  summary: 'Approve or reject a highlight story',
  description:
    'Operators. A dry run unless confirm is true; a confirmed decision publishes (approve) or drops (reject) the pending story, appends highlight_approved or highlight_rejected to the author’s event log, writes the audit row and spends one operator mutation.',
  mcpTool: 'ic_admin_highlight_decide',
  scope: SCOPE,
  sandbox: 'simulated',
  quotas: (deps) => [operatorMutationQuota(deps)],
  bodyLimit: 8 * 1024,
  input: DecideInput,
  output: MutationOutput,
  errors: MUTATION_ERRORS,
  async handler(ctx) {
    const { id, decision } = ctx.input;
    return runOperatorMutation(ctx, {
      action: `highlight.${decision}`,
      target: id,
      act: (scoped, operatorId) => decideHighlight(scoped, id, decision, operatorId),
      view: (db) => highlights.operatorView(db, id),
    });
  },
});
