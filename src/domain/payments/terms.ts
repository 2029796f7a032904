// What the donation resource is, apart from the x402 library: its path, its description, the
// amounts on offer, whether payments are on. Loading this loads no x402 code: the library (and zod
// under it) comes with the modules that speak the protocol (x402.ts, facilitator.ts, donate.ts,
// reconcile-pass.ts), which are imported at the first donation, discovery read or reconciliation that
// needs them (docs/deployment.md, "Only what is used is loaded").
import type { Config } from '../../config.ts';

export type PaymentSettings = Config['payments'];

/** The payable resource: one route, whatever surface reached it (the requirements name this URL). */
export const DONATE_PATH = '/api/payments/donate';

export const DONATION_DESCRIPTION = 'A donation to the community space (shown on its donor wall).';

/** Why the service takes no payment now, or undefined when it does. */
export function paymentsRefusal(settings: PaymentSettings): string | undefined {
  return settings.payTo ? undefined : 'X402_PAY_TO is not set: this service takes no payment.';
}

/** The amounts a donor may choose, as the requirements list them: each allowed amount, or the minimum. */
export function offeredAmountsCents(settings: PaymentSettings): number[] {
  return settings.allowedAmountsCents.length ? settings.allowedAmountsCents : [settings.minimumCents];
}

/** A settle call may take the facilitator's deadline; the claim is not reconciled before this has passed. */
export function leaseMs(settings: PaymentSettings): number {
  return settings.facilitatorTimeoutMs * 2 + 1000;
}
