import { createHash } from 'node:crypto';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { settlements } from '../../storage/payments.ts';
import type { Executor } from '../../storage/schema.ts';
import type { Clocked, Store } from '../ports.ts';

/** What the donor asked to be shown, kept with the claim so a reconciliation records it as asked. */
export interface DonorChoice {
  amountCents: number;
  name: string;
  message: string | null;
  public: boolean;
  memberId: string | null;
}

export interface Claim {
  key: string;
  payment: PaymentPayload;
  requirements: PaymentRequirements;
  donor: DonorChoice;
  attempts: number;
}

/**
 * The key one payment is known by. For an EIP-3009 authorization it is what the token contract
 * itself never accepts twice (network, token, payer, nonce), so a payload re-encoded or re-sent in
 * any form is the same payment; for any other payload kind, its signature.
 */
export function paymentKey(payment: PaymentPayload): string {
  const inner = payment.payload as {
    signature?: unknown;
    authorization?: { from?: unknown; nonce?: unknown };
  };
  const authorization = inner.authorization;
  const identity =
    typeof authorization?.from === 'string' && typeof authorization.nonce === 'string'
      ? [payment.accepted.network, payment.accepted.asset, authorization.from, authorization.nonce]
      : [payment.accepted.network, String(inner.signature ?? JSON.stringify(inner))];
  return createHash('sha256').update(identity.join('|').toLowerCase()).digest('hex');
}

/**
 * Claims the payment before it is sent to settle, committed on its own: exactly one request (on any
 * instance) gets true. The claim is leased for as long as a settle call may take; past the lease,
 * a reconciliation may take it over.
 */
export async function claimPayment(
  deps: Store & Clocked,
  claim: Omit<Claim, 'attempts'>,
  leaseMs: number,
): Promise<boolean> {
  const now = deps.clock.now();
  return settlements.claim(deps.db, {
    payment_key: claim.key,
    state: 'settling',
    payment: JSON.stringify(claim.payment),
    requirements: JSON.stringify(claim.requirements),
    donation: JSON.stringify(claim.donor),
    attempts: 1,
    lease_until: now + leaseMs,
    outcome: null,
    created_at: now,
    updated_at: now,
  });
}

export async function claimState(db: Executor, key: string) {
  return settlements.stateOf(db, key);
}

/** The facilitator refused the payment: nothing moved, so the claim goes and a new payload may be tried. */
export async function releaseClaim(db: Executor, key: string): Promise<void> {
  await settlements.removeSettling(db, key);
}

/** The claim was settled (or found settled) and its donation row written, in the caller's transaction. */
export async function markRecorded(trx: Executor, key: string, outcome: string, now: number): Promise<void> {
  await settlements.markRecorded(trx, key, outcome, now);
}

export async function markFailed(db: Executor, key: string, outcome: string, now: number): Promise<void> {
  await settlements.markFailed(db, key, outcome, now);
}

/**
 * Takes over one claim whose lease ran out (its request died or never heard back): the lease is
 * renewed in the same statement that checks it, so two reconcilers never settle the same claim at once.
 */
export async function takeOverExpired(deps: Store & Clocked, leaseMs: number): Promise<Claim | undefined> {
  const now = deps.clock.now();
  const candidates = await settlements.expired(deps.db, now, 10);
  for (const candidate of candidates) {
    const { payment_key: key, lease_until: leaseUntil } = candidate;
    if (!(await settlements.takeOver(deps.db, key, leaseUntil, now + leaseMs, now))) continue;
    const row = await settlements.get(deps.db, key);
    return {
      key: row.payment_key,
      payment: JSON.parse(row.payment) as PaymentPayload,
      requirements: JSON.parse(row.requirements) as PaymentRequirements,
      donor: JSON.parse(row.donation) as DonorChoice,
      attempts: Number(row.attempts),
    };
  }
  return undefined;
}

/** Claims still waiting: those past their lease (reconcilable now) and the soonest lease end. */
export async function pendingClaims(
  deps: Store & Clocked,
): Promise<{ count: number; nextLeaseEnd?: number }> {
  const { count, next } = await settlements.settling(deps.db);
  return count ? { count, nextLeaseEnd: Number(next) } : { count };
}
