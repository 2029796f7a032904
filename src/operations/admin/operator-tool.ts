import { Type } from '@sinclair/typebox';
import type { RatePolicy, RateSubject } from '../../core/rate-limit.ts';
import { RateInfoSchema } from '../schemas.ts';
import type { Deps } from '../services.ts';
import { refusedWith } from '../types.ts';

/**
 * Reference §11: operator mutations per token per UTC day. A decision made in the console has no
 * token: it is counted per operator member instead (docs/decisions.md, "One door per action").
 */
export function operatorMutationQuota(deps: Deps, per: RateSubject = 'token'): RatePolicy {
  return {
    name: 'operator_mutations',
    limit: deps.config.limits.operatorMutationsPerDay,
    window: 'utc_day',
    per,
  };
}

export const CONFIRM = Type.Optional(
  Type.Boolean({ description: 'false or absent: a dry run that changes nothing and spends no quota.' }),
);

export const MutationOutput = Type.Object({
  ok: Type.Literal(true),
  dry_run: Type.Boolean(),
  applied: Type.Boolean(),
  action: Type.String(),
  target: Type.String(),
  record: Type.Object(
    {},
    { additionalProperties: true, description: 'The record as it is (or would be) after the change.' },
  ),
  rate: RateInfoSchema,
});

export const MUTATION_ERRORS = [
  { status: 400, description: 'Invalid input (or an unknown tier)' },
  { status: 401, description: 'Missing, unknown or revoked token (or no signed-in operator session)' },
  { status: 403, description: 'The token lacks the review scope, or the member’s tier no longer grants it' },
  refusedWith(['not_found'], 'No such record'),
  refusedWith(['already_decided'], 'Already decided'),
  { status: 429, description: 'Operator mutations for this token are spent until the next UTC day' },
];

/** What every operator tool shares: MCP and A2A only (reference §5), an agent bearer with an admin:* scope. */
export const OPERATOR_TOOL = {
  method: 'POST',
  tag: 'operator',
  credential: 'bearer',
  idempotent: false,
  inputFrom: 'body',
  successStatus: 200,
} as const;

/**
 * An operator's decision: the same operation serves the agent's tool (bearer), the operator
 * console (the signed-in operator's session, surface `web`) and the CLI (a session of the operator
 * it names, surface `cli`). MCP and A2A never read a session cookie, so there it stays bearer-only.
 */
export const OPERATOR_DECISION = {
  ...OPERATOR_TOOL,
  credential: 'bearer_or_session',
  // A decision overwrites the record it decides (MCP destructiveHint).
  effect: 'destructive',
} as const;

export const LIST_ERRORS = MUTATION_ERRORS.filter((e) => [400, 401, 403].includes(e.status));

export const listLimit = Type.Optional(
  Type.Integer({ minimum: 1, maximum: 200, description: '1 to 200 (default 50).' }),
);

export const isoTime = (ms: number | null) => (ms === null ? null : new Date(Number(ms)).toISOString());
