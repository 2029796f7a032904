import type { Transaction } from 'kysely';
import { type ApiError, apiError } from '../../core/errors.ts';
import { peekQuota, takeQuota } from '../../core/quota.ts';
import { type PolicyOutcome, rateInfo } from '../../core/rate-limit.ts';
import { viaOf } from '../../domain/auth/principal.ts';
import { type AuditEntry, writeAuditRow } from '../../domain/members/operator-audit.ts';
import type { Db, Schema } from '../../storage/schema.ts';
import { transact } from '../../storage/transactions.ts';
import type { Deps } from '../services.ts';
import type { OperationContext, SignedInPrincipal } from '../types.ts';
import { operatorMutationQuota } from './operator-tool.ts';

/** What one operator decision changes, written once for its dry run and its confirmed run. */
export interface Mutation {
  action: string;
  target: string;
  detail?: Record<string, unknown>;
  /** The domain decision, run against `scoped` (a transaction); returns 'done' (or 'unchanged') or why not. */
  act(scoped: Deps, operatorId: string): Promise<string>;
  /** Reads the record after the change, inside the same transaction. */
  view(db: Db): Promise<Record<string, unknown> | undefined>;
  /** The answer to an outcome the shared ones below do not cover (a domain message). */
  refuse?(outcome: string): ApiError | undefined;
}

/** 'unchanged': the record already is what the operator asked for; answered, audited, not charged. */
const SUCCEEDED = new Set(['done', 'unchanged']);

function refusal(mutation: Mutation, outcome: string): ApiError {
  const own = mutation.refuse?.(outcome);
  if (own) return own;
  const { target } = mutation;
  if (outcome === 'unknown') return apiError('not_found', { message: `Nothing is filed under ${target}.` });
  if (outcome === 'unknown_tier')
    return apiError('unknown_tier', { message: 'There is no such tier.', extra: { field: 'tier' } });
  return apiError('already_decided', { target, outcome });
}

/** The domain still takes the whole Deps: the same dependencies, bound to the transaction. */
function boundTo(deps: Deps, trx: Transaction<Schema>): Deps {
  return { ...deps, db: trx as unknown as Db };
}

/** Thrown to roll a dry run's transaction back once its outcome and record are known. */
class Rehearsed extends Error {
  readonly outcome: string;
  readonly record: Record<string, unknown> | undefined;

  constructor(outcome: string, record: Record<string, unknown> | undefined) {
    super('dry run');
    this.outcome = outcome;
    this.record = record;
  }
}

/**
 * Runs the real decision in a transaction that is always rolled back: "would happen" is what
 * happens. Throwing out of `transact` also keeps the call's activity row out of it (the pipeline
 * then writes that row on its own). Inside a transaction already open (a sandbox token's call, which
 * the pipeline rehearses as a whole), the work joins it and that outer rollback undoes it.
 */
async function rehearse(deps: Deps, mutation: Mutation, operatorId: string) {
  try {
    await transact(deps, async (trx) => {
      const outcome = await mutation.act(boundTo(deps, trx), operatorId);
      throw new Rehearsed(outcome, SUCCEEDED.has(outcome) ? await mutation.view(trx) : undefined);
    });
  } catch (error) {
    if (error instanceof Rehearsed) return error;
    throw error;
  }
  throw new Error('unreachable: a rehearsal always rolls back');
}

/**
 * The daily quota counts an agent's confirmed decisions per token (reference §11): it bounds what a
 * token can do if it goes astray. A person deciding in the console, or from the CLI with the
 * database's own credentials, is not charged: a limit there would only stop an operator clearing a
 * backlog (docs/decisions.md). Every door is still authorized and audited.
 */
function quotaOf(ctx: OperationContext<unknown, SignedInPrincipal>) {
  const { principal, deps } = ctx;
  if (principal.kind === 'bearer')
    return { policy: operatorMutationQuota(deps), subject: principal.token.id, charged: true };
  return { policy: operatorMutationQuota(deps, 'member'), subject: principal.member.id, charged: false };
}

/**
 * An operator's decision (reference §5, §11), from whichever door: an agent's tool, the console or
 * the CLI. Without `confirm: true` it is a dry run: the same decision, rolled back, answered with
 * the record it would leave; nothing changes and no quota is spent (the console and the CLI send
 * confirm: true; submitting the form or running the command is the confirmation). Confirmed, the
 * decision, its member event-log record, the audit row naming the surface, and one unit of the
 * daily quota commit together; a decision that finds nothing to do is audited with its outcome and
 * spends nothing.
 */
export async function runOperatorMutation(
  ctx: OperationContext<{ confirm?: boolean }, SignedInPrincipal>,
  mutation: Mutation,
) {
  const { deps, principal, now, request } = ctx;
  const operatorId = principal.member.id;
  const quota = quotaOf(ctx);
  const answer = (
    dryRun: boolean,
    applied: boolean,
    record: Record<string, unknown> | undefined,
    rate: PolicyOutcome,
    spent: boolean,
  ) => ({
    body: {
      ok: true as const,
      dry_run: dryRun,
      applied,
      action: mutation.action,
      target: mutation.target,
      record: record ?? {},
      rate: rateInfo(rate),
    },
    rate: spent ? [rate] : [],
  });
  const peek = () => peekQuota(deps.db, quota.policy, quota.subject, now);

  if (ctx.input.confirm !== true) {
    const rehearsal = await rehearse(deps, mutation, operatorId);
    if (!SUCCEEDED.has(rehearsal.outcome)) throw refusal(mutation, rehearsal.outcome);
    return answer(true, false, rehearsal.record, await peek(), false);
  }

  const entry: AuditEntry = {
    operatorId,
    action: mutation.action,
    target: mutation.target,
    detail: { ...mutation.detail, via: viaOf(principal), surface: request.surface },
  };
  const { outcome, spent, record } = await transact(deps, async (trx) => {
    const outcome = await mutation.act(boundTo(deps, trx), operatorId);
    let spent: PolicyOutcome | undefined;
    let record: Record<string, unknown> | undefined;
    if (SUCCEEDED.has(outcome)) {
      if (outcome === 'done' && quota.charged)
        spent = await takeQuota(
          trx,
          quota.policy,
          quota.subject,
          now,
          'Dry runs stay free. Back off to the next UTC day.',
        );
      record = await mutation.view(trx);
    }
    await writeAuditRow(trx, deps.clock.now(), entry, outcome);
    return { outcome, spent, record };
  });
  if (!SUCCEEDED.has(outcome)) throw refusal(mutation, outcome);
  return answer(false, outcome === 'done', record, spent ?? (await peek()), spent !== undefined);
}
