import { decodePaymentRequiredHeader, decodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentRequired } from '@x402/core/types';
import { type ApiError, apiError } from '../../core/errors.ts';
import type { Store } from '../ports.ts';
import { FacilitatorUnusable } from './facilitator.ts';
import { facilitatorRefusal } from './facilitator-refusal.ts';
import type { DonatePort } from './payment-port.ts';
import { reconcileAfter } from './reconcile-schedule.ts';
import { type RecordedDonation, recordDonation } from './record.ts';
import {
  type Claim,
  claimPayment,
  claimState,
  type DonorChoice,
  paymentKey,
  releaseClaim,
} from './settlements.ts';
import { DONATE_PATH, leaseMs, type PaymentSettings, paymentsRefusal } from './terms.ts';
import { paymentServer, requestContext } from './x402.ts';

export type { DonatePort } from './payment-port.ts';

export interface DonationAttempt {
  amountCents: number;
  donor: Omit<DonorChoice, 'amountCents'>;
  /** The PAYMENT-SIGNATURE header, when the request carried one. */
  paymentHeader?: string;
}

export interface Donated {
  donation: RecordedDonation;
  /** PAYMENT-RESPONSE (the settlement receipt), as x402's helpers encode it. */
  headers: Record<string, string>;
}

/** The amounts a donor may choose, or why `cents` is not one of them. */
export function amountProblem(settings: PaymentSettings, cents: number): string | undefined {
  const allowed = settings.allowedAmountsCents;
  if (allowed.length) {
    if (allowed.includes(cents)) return undefined;
    return `amount_usd must be one of ${allowed.map((c) => c / 100).join(', ')}`;
  }
  if (cents < settings.minimumCents) return `amount_usd must be at least ${settings.minimumCents / 100}`;
  if (cents > settings.maximumCents) return `amount_usd must be at most ${settings.maximumCents / 100}`;
  return undefined;
}

/**
 * One donation over x402: without a payment, the payment requirements (402); with one, verified by
 * the facilitator, claimed (so no instance ever settles it twice), settled, and recorded once
 * settled. The x402 helpers of @x402/core build and check everything the protocol says.
 */
export async function donate(deps: DonatePort, attempt: DonationAttempt): Promise<Donated> {
  const settings = deps.config.payments;
  const refusal = paymentsRefusal(settings);
  if (refusal || !settings.payTo)
    // Not a passing outage: while no payee is configured the payable resource does not exist.
    throw apiError('payments_not_configured', { message: refusal ?? '' });
  const problem = amountProblem(settings, attempt.amountCents);
  if (problem) throw apiError('validation_failed', { message: problem, extra: { field: 'amount_usd' } });
  const context = requestContext({
    paymentHeader: attempt.paymentHeader,
    amountCents: attempt.amountCents,
    url: `${deps.config.publicUrl}${DONATE_PATH}`,
  });
  await refuseKnownPayment(deps, attempt.paymentHeader);
  const server = await facilitated(() => paymentServer(settings, settings.payTo as string));
  const processed = await facilitated(() => server.processHTTPRequest(context));
  if (processed.type === 'no-payment-required') throw new Error('the donation route is always payable');
  if (processed.type === 'payment-error') throw paymentRequired(processed.response);
  const { paymentPayload: payment, paymentRequirements: requirements } = processed;
  const claim: Claim = {
    key: paymentKey(payment),
    payment,
    requirements,
    donor: { ...attempt.donor, amountCents: attempt.amountCents },
    attempts: 1,
  };
  if (!(await claimPayment(deps, claim, leaseMs(settings)))) throw await alreadyClaimed(deps, claim.key);
  let settled: Awaited<ReturnType<typeof server.processSettlement>>;
  try {
    settled = await server.processSettlement(payment, requirements, processed.declaredExtensions, {
      request: context,
    });
  } catch (error) {
    // The facilitator answered with an error: it settled nothing, and the payload may be tried again.
    if (error instanceof FacilitatorUnusable && error.failure === 'bad_answer')
      await releaseClaim(deps.db, claim.key);
    // Silent or away: whether it settled is unknown, so the claim stays for reconciliation, due
    // once its lease has run out.
    if (error instanceof FacilitatorUnusable && error.failure === 'unavailable')
      reconcileAfter(deps, deps.clock.now() + leaseMs(settings));
    throw facilitatorError(error);
  }
  if (!settled.success) {
    await releaseClaim(deps.db, claim.key);
    throw paymentRequired(settled.response, settled.errorReason);
  }
  const donation = await recordDonation(
    deps,
    claim,
    { transaction: settled.transaction || null, network: settled.network, payer: settled.payer ?? null },
    'settled',
  );
  return { donation, headers: settled.headers };
}

/** Runs a call to the facilitator; its silence or breakage becomes a 503 or 502 in the Error shape. */
async function facilitated<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw facilitatorError(error);
  }
}

function facilitatorError(error: unknown): unknown {
  if (!(error instanceof FacilitatorUnusable)) return error;
  return facilitatorRefusal(error.failure, 'nothing was recorded.');
}

/** The protocol's answer (402 and PAYMENT-REQUIRED), with the requirements in the Error shape's body too. */
function paymentRequired(
  response: { status: number; headers: Record<string, string> },
  reason?: string,
): ApiError {
  const header = response.headers['PAYMENT-REQUIRED'];
  const required: PaymentRequired | undefined = header ? decodePaymentRequiredHeader(header) : undefined;
  const reasonText = reason ?? required?.error ?? 'Payment required';
  // The library words some reasons as sentences ("No matching payment requirements"): `error` is a code.
  const code = /^[a-z0-9_]+$/.test(reasonText)
    ? reasonText
    : reasonText.toLowerCase().replace(/[^a-z0-9]+/g, '_');
  const headers = Object.fromEntries(
    Object.entries(response.headers).map(([name, value]) => [name.toLowerCase(), value]),
  );
  delete headers['content-type'];
  return apiError('payment_required', {
    status: response.status,
    code,
    reason: reasonText,
    headers,
    extra: required
      ? { x402Version: required.x402Version, resource: required.resource, accepts: required.accepts }
      : {},
  });
}

/** A payment this service has already claimed is refused before the facilitator is asked again. */
async function refuseKnownPayment(deps: Store, header: string | undefined): Promise<void> {
  if (!header) return;
  let key: string;
  try {
    key = paymentKey(decodePaymentSignatureHeader(header));
  } catch {
    return; // Not a payload at all: x402's helpers answer it with the requirements.
  }
  if (await claimState(deps.db, key)) throw await alreadyClaimed(deps, key);
}

async function alreadyClaimed(deps: Store, key: string): Promise<ApiError> {
  const state = await claimState(deps.db, key);
  return apiError('payment_already_used', { settling: state?.state === 'settling' });
}
