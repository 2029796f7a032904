import { Type } from '@sinclair/typebox';
import { type ApiError, apiError, errors } from '../../core/errors.ts';
import { createMember, MemberError } from '../../domain/members/members.ts';
import { changeMemberTier } from '../../domain/members/tier-requests.ts';
import { members } from '../../storage/members.ts';
import { strictObject } from '../schemas.ts';
import { defineOperation } from '../types.ts';
import { runOperatorMutation } from './operator-mutation.ts';
import {
  CONFIRM,
  MUTATION_ERRORS,
  MutationOutput,
  OPERATOR_DECISION,
  operatorMutationQuota,
} from './operator-tool.ts';

const SCOPE = 'admin:tier_review';
const REASON_MAX = 600;

const sentence = (words: string) => `${words[0]?.toUpperCase() ?? ''}${words.slice(1)}.`;

/** The domain answers a refused member change in words; the operation answers it with an error code. */
function memberRefusal(outcome: string): ApiError {
  if (outcome.startsWith('no member')) return apiError('unknown_member', { message: sentence(outcome) });
  if (outcome.startsWith('unknown tier'))
    return apiError('unknown_tier', { message: sentence(outcome), extra: { field: 'tier' } });
  if (outcome.includes('already exists')) return apiError('member_exists', { message: sentence(outcome) });
  if (outcome.endsWith('is not an email address'))
    return errors.validation(sentence(outcome), { field: 'email' });
  return errors.validation(sentence(outcome));
}

const SetTierInput = strictObject({
  member_id: Type.String({ minLength: 1, maxLength: 80, description: 'The member id (mem_…).' }),
  tier: Type.String({ minLength: 1, maxLength: 40, description: 'The tier to set.' }),
  reason: Type.Optional(Type.String({ maxLength: REASON_MAX, description: 'Told to the member.' })),
  confirm: CONFIRM,
});

export const adminSetMemberTier = defineOperation<typeof SetTierInput.static, unknown>({
  ...OPERATOR_DECISION,
  id: 'adminSetMemberTier',
  summary: 'Set a member’s tier',
  description:
    'Operators. A dry run unless confirm is true; a confirmed change sets the member’s tier directly (not answering a request), adds a `changed` row to their tier history, appends tier_changed to their event log, writes the audit row and spends one operator mutation. Setting the tier the member already has changes nothing and spends nothing (applied: false).',
  mcpTool: 'ic_admin_member_set_tier',
  scope: SCOPE,
  sandbox: 'simulated',
  quotas: (deps) => [operatorMutationQuota(deps)],
  bodyLimit: 8 * 1024,
  input: SetTierInput,
  output: MutationOutput,
  errors: MUTATION_ERRORS,
  async handler(ctx) {
    const { member_id, tier, reason } = ctx.input;
    return runOperatorMutation(ctx, {
      action: 'member.set_tier',
      target: member_id,
      detail: { tier, reason },
      act: (scoped, operatorId) => changeMemberTier(scoped, member_id, tier, operatorId, reason),
      view: (db) => members.tierView(db, member_id),
      refuse: memberRefusal,
    });
  },
});

const InviteInput = strictObject({
  email: Type.String({ minLength: 3, maxLength: 254, description: 'Where the member signs in.' }),
  name: Type.String({ minLength: 1, maxLength: 120, pattern: '\\S', description: 'Shown to others.' }),
  tier: Type.Optional(Type.String({ minLength: 1, maxLength: 40, description: 'Default: the lowest tier.' })),
  confirm: CONFIRM,
});

export const adminInviteMember = defineOperation<typeof InviteInput.static, unknown>({
  ...OPERATOR_DECISION,
  id: 'adminInviteMember',
  summary: 'Invite a member',
  description:
    'Operators. A dry run unless confirm is true; a confirmed invitation adds the member on the given tier, so the address can sign in also while open sign-up is off; it writes the audit row and spends one operator mutation.',
  mcpTool: 'ic_admin_member_invite',
  scope: SCOPE,
  sandbox: 'simulated',
  quotas: (deps) => [operatorMutationQuota(deps)],
  bodyLimit: 8 * 1024,
  input: InviteInput,
  output: MutationOutput,
  errors: MUTATION_ERRORS,
  async handler(ctx) {
    const { email, name, tier } = ctx.input;
    const target = email.trim().toLowerCase();
    return runOperatorMutation(ctx, {
      action: 'member.invite',
      target,
      detail: { tier },
      async act(scoped) {
        try {
          await createMember(scoped.db, scoped.clock, scoped.tiers, { email, name, tier });
          return 'done';
        } catch (error) {
          if (error instanceof MemberError) return error.message;
          throw error;
        }
      },
      view: (db) => members.invitationView(db, target),
      refuse: memberRefusal,
    });
  },
});
