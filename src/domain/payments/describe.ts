import { offeredAmountsCents, type PaymentSettings, paymentsRefusal } from './terms.ts';

/** Whether the service takes payments, as setup-check and the ic_donate tool describe it. */
export function paymentStatus(settings: PaymentSettings) {
  const refusal = paymentsRefusal(settings);
  return {
    accepting: refusal === undefined,
    ...(refusal ? { reason: refusal } : {}),
    protocol: 'x402',
    network: settings.network,
    asset: settings.asset?.address ?? 'default USD stablecoin of the network',
    amounts_usd: settings.allowedAmountsCents.length
      ? offeredAmountsCents(settings).map((cents) => cents / 100)
      : null,
    minimum_usd: settings.minimumCents / 100,
    maximum_usd: settings.maximumCents / 100,
  };
}

/** The boot line about payments. */
export function describePayments(settings: PaymentSettings): string {
  const refusal = paymentsRefusal(settings);
  if (refusal) return `payments: off (${refusal} Set it to take x402 donations.)`;
  const testnet = settings.network === 'eip155:84532' ? ', a testnet' : '';
  return `payments: x402 donations to ${settings.payTo} on ${settings.network}${testnet}, settled through ${settings.facilitatorUrl}`;
}
