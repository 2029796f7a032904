import { randomUUID } from 'node:crypto';
import { donations } from '../../storage/payments.ts';
import { transact, type WritePort } from '../../storage/transactions.ts';
import { appendEvent } from '../eventlog/eventlog.ts';
import type { Clocked, OnDatabase, Store } from '../ports.ts';
import { forgetDonorWall } from './donor-wall.ts';
import { type Claim, markRecorded } from './settlements.ts';

export interface Settlement {
  /** The transaction hash; null when a reconciliation found the authorization spent but not by which transaction. */
  transaction: string | null;
  network: string;
  payer: string | null;
}

export interface RecordedDonation {
  id: string;
  amountCents: number;
  name: string;
  message: string | null;
  public: boolean;
  memberId: string | null;
  transaction: string | null;
  network: string;
  at: number;
}

/**
 * Writes the donation of a settled claim, once: the donation row (unique on the payment key), the
 * claim marked recorded and, for a member, a `donation_received` event, in one transaction. A second
 * call for the same claim (two reconcilers, or a reconciler and the request) finds the row and
 * returns what was recorded.
 */
export async function recordDonation(
  deps: Store & Clocked & WritePort & OnDatabase,
  claim: Claim,
  settlement: Settlement,
  outcome: string,
): Promise<RecordedDonation> {
  const now = deps.clock.now();
  const { donor } = claim;
  const recorded = await transact(deps, async (trx) => {
    const existing = await donations.fromPayment(trx, claim.key);
    if (existing)
      return {
        id: existing.id,
        at: Number(existing.created_at),
        transaction: existing.transaction_ref ?? null,
      };
    const id = `don_${randomUUID().replaceAll('-', '')}`;
    await donations.insert(trx, {
      id,
      donor_name: donor.name,
      amount_cents: donor.amountCents,
      message: donor.message,
      public: donor.public ? 1 : 0,
      source: 'x402',
      created_at: now,
      member_id: donor.memberId,
      network: settlement.network,
      asset: claim.requirements.asset,
      amount_atomic: claim.requirements.amount,
      payer: settlement.payer,
      transaction_ref: settlement.transaction,
      payment_key: claim.key,
    });
    await markRecorded(trx, claim.key, outcome, now);
    if (donor.memberId) {
      await appendEvent(
        trx,
        donor.memberId,
        {
          type: 'donation_received',
          actor: { kind: 'member', member_id: donor.memberId },
          target: { donation_id: id },
          payload: {
            amount_usd: donor.amountCents / 100,
            network: settlement.network,
            transaction: settlement.transaction,
            shown_on_wall: donor.public,
          },
          actions: [
            { label: 'See the donor wall', mcp_tool: 'ic_donations_total', args: {}, consequential: false },
          ],
        },
        now,
      );
    }
    return { id, at: now, transaction: settlement.transaction };
  });
  forgetDonorWall(deps);
  return {
    id: recorded.id,
    amountCents: donor.amountCents,
    name: donor.name,
    message: donor.message,
    public: donor.public,
    memberId: donor.memberId,
    transaction: recorded.transaction,
    network: settlement.network,
    at: recorded.at,
  };
}
