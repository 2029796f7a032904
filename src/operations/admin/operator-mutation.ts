import { Type } from '@sinclair/typebox';
import { ApiError, errors } from '../../core/errors.ts';
import { peekQuota, takeQuota } from '../../core/quota.ts';
import { type PolicyOutcome, type RatePolicy, rateInfo } from '../../core/rate-limit.ts';
import type { Deps } from '../../deps.ts';
import { auditedAction } from '../../domain/members/operator-audit.ts';
import type { Db } from '../../storage/schema.ts';
import { RateInfoSchema } from '../schemas.ts';
import type { OperationContext } from '../types.ts';

/** Reference §11: operator mutations per token per UTC day. */
export function operatorMutationQuota(deps: Deps): RatePolicy {
  return {
    name: 'operator_mutations',
    limit: deps.config.limits.operatorMutationsPerDay,
    window: 'utc_day',
    per: 'token',
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
  { status: 400, description: 'Invalid input (or, for tier requests, an unknown tier)' },
  { status: 401, description: 'Missing, unknown or revoked token' },
  { status: 403, description: 'The token lacks the review scope, or the member’s tier no longer grants it' },
  { status: 404, description: 'No such record' },
  { status: 409, description: 'Already decided' },
  { status: 429, description: 'Operator mutations for this token are spent until the next UTC day' },
];

/** What every operator tool shares: MCP and A2A only, an agent bearer with an admin:* scope. */
export const OPERATOR_TOOL = {
  method: 'POST',
  tag: 'operator',
  credential: 'bearer',
  idempotent: false,
  inputFrom: 'body',
  successStatus: 200,
} as const;

export const LIST_ERRORS = MUTATION_ERRORS.filter((e) => [400, 401, 403].includes(e.status));

export const listLimit = Type.Optional(
  Type.Integer({ minimum: 1, maximum: 200, description: '1 to 200 (default 50).' }),
);

export const isoTime = (ms: number | null) => (ms === null ? null : new Date(Number(ms)).toISOString());

/** What one operator tool changes, written once for its dry run and its confirmed run. */
export interface Mutation {
  action: string;
  target: string;
  detail?: Record<string, unknown>;
  /** The domain decision, run against `scoped` (a transaction); returns 'done' or why not. */
  act(scoped: Deps, operatorId: string): Promise<string>;
  /** Reads the record after the change, inside the same transaction. */
  view(db: Db): Promise<Record<string, unknown> | undefined>;
}

function refusal(outcome: string, target: string): ApiError {
  if (outcome === 'unknown') return errors.notFound('not_found', `Nothing is filed under ${target}.`);
  if (outcome === 'unknown_tier')
    return new ApiError(400, 'unknown_tier', 'validation', {
      message: 'There is no such tier.',
      extra: { field: 'tier' },
    });
  return errors.conflict('already_decided', `${target} was already decided (${outcome}); nothing changed.`);
}

/** Thrown to roll a dry run's transaction back once its outcome and record are known. */
class Rehearsed extends Error {
  constructor(
    readonly outcome: string,
    readonly record: Record<string, unknown> | undefined,
  ) {
    super('dry run');
  }
}

/** Runs the real decision in a transaction that is always rolled back: "would happen" is what happens. */
async function rehearse(deps: Deps, mutation: Mutation, operatorId: string) {
  try {
    await deps.db.transaction().execute(async (trx) => {
      const scoped = { ...deps, db: trx as unknown as Db };
      const outcome = await mutation.act(scoped, operatorId);
      throw new Rehearsed(outcome, outcome === 'done' ? await mutation.view(scoped.db) : undefined);
    });
  } catch (error) {
    if (error instanceof Rehearsed) return error;
    throw error;
  }
  throw new Error('unreachable: a rehearsal always rolls back');
}

/**
 * An operator tool's write (reference §5, §11). Without `confirm: true` it is a dry run: the same
 * decision, rolled back, answered with the record it would leave; nothing changes and no quota is
 * spent. Confirmed, the decision, its audit row and one unit of the daily quota commit together;
 * a decision that finds nothing to do is audited with its outcome and spends nothing.
 */
export async function runOperatorMutation(ctx: OperationContext<{ confirm?: boolean }>, mutation: Mutation) {
  const { deps, principal, now } = ctx;
  if (principal.kind !== 'bearer') throw errors.unauthorized('missing_token', 'Send an agent token.');
  const policy = operatorMutationQuota(deps);
  const operatorId = principal.member.id;
  const tokenId = principal.token.id;
  const answer = (dryRun: boolean, record: Record<string, unknown> | undefined, rate: PolicyOutcome) => ({
    body: {
      ok: true as const,
      dry_run: dryRun,
      applied: !dryRun,
      action: mutation.action,
      target: mutation.target,
      record: record ?? {},
      rate: rateInfo(rate),
    },
    rate: dryRun ? [] : [rate],
  });

  if (ctx.input.confirm !== true) {
    const rehearsal = await rehearse(deps, mutation, operatorId);
    if (rehearsal.outcome !== 'done') throw refusal(rehearsal.outcome, mutation.target);
    return answer(true, rehearsal.record, await peekQuota(deps.db, policy, tokenId, now));
  }

  let spent: PolicyOutcome | undefined;
  let record: Record<string, unknown> | undefined;
  const outcome = await auditedAction(
    deps,
    {
      operatorId,
      action: mutation.action,
      target: mutation.target,
      detail: { ...mutation.detail, via: 'agent' },
    },
    async (scoped) => {
      const result = await mutation.act(scoped, operatorId);
      if (result !== 'done') return result;
      spent = await takeQuota(
        scoped.db,
        policy,
        tokenId,
        now,
        'Dry runs stay free. Back off to the next UTC day.',
      );
      record = await mutation.view(scoped.db);
      return result;
    },
  );
  if (outcome !== 'done' || !spent) throw refusal(outcome, mutation.target);
  return answer(false, record, spent);
}
