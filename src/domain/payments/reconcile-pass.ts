import { FacilitatorUnusable } from './facilitator.ts';
import type { DonatePort } from './payment-port.ts';
import { recordDonation } from './record.ts';
import { markFailed, pendingClaims, takeOverExpired } from './settlements.ts';
import { leaseMs } from './terms.ts';
import { paymentServer } from './x402.ts';

/** The token refused the authorization because it was already used: the transfer happened before. */
const ALREADY_SETTLED = new Set(['invalid_exact_evm_nonce_already_used']);
/** The facilitator has broadcast it and not yet seen it mined: ask again later. */
const STILL_PENDING = new Set(['settlement_pending']);

export interface ReconcileReport {
  /** Settled now, or found settled, and recorded. */
  recorded: number;
  /** Refused for good (expired, invalid): nothing moved, nothing recorded. */
  failed: number;
  /** Still waiting: leased by a request in flight, or the facilitator could not be asked. */
  waiting: number;
}

/**
 * Settles every claim whose request never recorded it (the process was killed, the facilitator went
 * silent) and records the ones that settle. Settling again is what the protocol offers to learn the
 * outcome: a payload never broadcast settles now; one already broadcast is reported by the token as
 * used (recorded without its transaction hash, which the lost answer carried); one that can no longer
 * settle (expired) is marked failed. Each claim is taken over under a renewed lease, so concurrent
 * reconcilers (several instances, the CLI) never settle the same claim together.
 */
export async function reconcilePayments(deps: DonatePort): Promise<ReconcileReport> {
  const report: ReconcileReport = { recorded: 0, failed: 0, waiting: 0 };
  const settings = deps.config.payments;
  if (!settings.payTo) return { ...report, waiting: (await pendingClaims(deps)).count };
  for (;;) {
    const claim = await takeOverExpired(deps, leaseMs(settings));
    if (!claim) break;
    let result: Awaited<ReturnType<Awaited<ReturnType<typeof paymentServer>>['server']['settlePayment']>>;
    try {
      const server = await paymentServer(settings, settings.payTo);
      result = await server.server.settlePayment(claim.payment, claim.requirements);
    } catch (error) {
      if (error instanceof FacilitatorUnusable) break; // Tried again at the next pass.
      throw error;
    }
    if (result.success) {
      const settlement = {
        transaction: result.transaction || null,
        network: result.network,
        payer: result.payer ?? null,
      };
      await recordDonation(deps, claim, settlement, 'reconciled');
      report.recorded++;
    } else if (result.errorReason && ALREADY_SETTLED.has(result.errorReason)) {
      const payer =
        (claim.payment.payload as { authorization?: { from?: string } }).authorization?.from ?? null;
      const settlement = { transaction: null, network: claim.requirements.network, payer };
      await recordDonation(deps, claim, settlement, 'reconciled: authorization already used');
      report.recorded++;
    } else if (!result.errorReason || !STILL_PENDING.has(result.errorReason)) {
      await markFailed(deps.db, claim.key, result.errorReason ?? 'settle refused', deps.clock.now());
      report.failed++;
    }
  }
  report.waiting = (await pendingClaims(deps)).count;
  return report;
}
