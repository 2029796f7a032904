import { Type } from '@sinclair/typebox';
import { sanitizeText } from '../../domain/feedback/sanitize.ts';
import { DONATE_PATH } from '../../domain/payments/terms.ts';
import { strictObject } from '../schemas.ts';
import { defineOperation, refusedWith } from '../types.ts';

const Input = strictObject({
  amount_usd: Type.Number({
    exclusiveMinimum: 0,
    maximum: 1_000_000,
    multipleOf: 0.01,
    description:
      'The amount in US dollars (cents at most). The operator sets the allowed amounts or a minimum and maximum (`ic_donate` lists them).',
  }),
  name: Type.Optional(
    Type.String({
      maxLength: 80,
      description: 'Name shown on the donor wall (default: the member’s name, else "Anonymous donor").',
    }),
  ),
  message: Type.Optional(
    Type.String({
      maxLength: 280,
      description: 'Public message shown on the wall; stored sanitized like feedback.',
    }),
  ),
  anonymous: Type.Optional(
    Type.Boolean({ description: 'true: counted in the totals, never shown or named on the wall.' }),
  ),
});

const Output = Type.Object({
  ok: Type.Literal(true),
  donation: Type.Object({
    id: Type.String(),
    amount_usd: Type.Number(),
    name: Type.String(),
    message: Type.Union([Type.String(), Type.Null()]),
    shown_on_wall: Type.Boolean(),
    member_id: Type.Union([Type.String(), Type.Null()]),
    network: Type.String({ description: 'CAIP-2 network the payment settled on.' }),
    transaction: Type.Union([Type.String(), Type.Null()], {
      description: 'The settlement transaction hash.',
    }),
    at: Type.String({ format: 'date-time' }),
  }),
});

/** Empty, or only hidden characters, counts as not given. */
function shown(value: string | undefined): string | undefined {
  const clean = value === undefined ? '' : sanitizeText(value);
  return clean === '' ? undefined : clean;
}

export const donateWithX402 = defineOperation<typeof Input.static, typeof Output.static>({
  id: 'donate',
  method: 'POST',
  path: DONATE_PATH,
  tag: 'payments',
  summary: 'Donate with an x402 payment',
  description:
    'A payable resource on the x402 protocol (v2, scheme `exact`). Without a `PAYMENT-SIGNATURE` header it answers 402 with the payment requirements in the `PAYMENT-REQUIRED` header (base64 JSON: network, asset, amount, `payTo`, resource, description, timeout) and in the body (`accepts`). Sign one and repeat the same request with the header: the payment is verified and settled through the operator’s facilitator, recorded on the donor wall, and answered 200 with the settlement receipt in `PAYMENT-RESPONSE`. A bearer token or browser session, when sent, attributes the donation to the member (`donation_received` in their event log). A payment is settled and recorded at most once; sandbox tokens are refused.',
  credential: 'public',
  sandbox: 'denied',
  idempotent: true,
  // Verified and settled by the operator's facilitator, which moves tokens on a chain.
  openWorld: true,
  bodyLimit: 8 * 1024,
  inputFrom: 'body',
  input: Input,
  output: Output,
  successStatus: 200,
  headers: {
    request: {
      'PAYMENT-SIGNATURE':
        'The x402 payment payload (base64 JSON), signed over one of the offered requirements.',
    },
    success: {
      'PAYMENT-RESPONSE': 'The settlement receipt (base64 JSON: success, transaction, network, payer).',
    },
  },
  errors: [
    { status: 400, description: 'Bad input, or an amount the operator does not accept' },
    {
      status: 402,
      description:
        'Payment required (no PAYMENT-SIGNATURE), or the payment was refused (wrong amount, network, asset or payTo, expired or badly signed authorization): `error` names the reason; nothing is charged or recorded',
      headers: {
        'PAYMENT-REQUIRED': 'The x402 payment requirements (base64 JSON), with `error` on a refusal.',
      },
    },
    { status: 403, description: 'A sandbox token (payments are never simulated)' },
    refusedWith(
      ['payments_not_configured'],
      'Payments are not configured (X402_PAY_TO unset): payments_not_configured',
    ),
    refusedWith(['payment_already_used'], 'This payment was already used (payment_already_used)'),
    refusedWith(['facilitator_error'], 'The facilitator answered with an error; nothing recorded'),
    {
      status: 503,
      description: 'The facilitator is away or slow; nothing recorded',
    },
  ],
  async handler({ input, principal, deps, request }) {
    const header = request.httpHeaders?.['payment-signature'];
    const member = principal.kind === 'anonymous' ? undefined : principal.member;
    const anonymous = input.anonymous === true;
    // The x402 library loads with the first donation (domain/payments/terms.ts).
    const { donate } = await import('../../domain/payments/donate.ts');
    const { donation, headers } = await donate(deps, {
      amountCents: Math.round(input.amount_usd * 100),
      paymentHeader: typeof header === 'string' ? header : undefined,
      donor: {
        name: anonymous ? 'Anonymous donor' : (shown(input.name) ?? member?.name ?? 'Anonymous donor'),
        message: shown(input.message) ?? null,
        public: !anonymous,
        memberId: member?.id ?? null,
      },
    });
    return {
      headers,
      body: {
        ok: true as const,
        donation: {
          id: donation.id,
          amount_usd: donation.amountCents / 100,
          name: donation.name,
          message: donation.message,
          shown_on_wall: donation.public,
          member_id: donation.memberId,
          network: donation.network,
          transaction: donation.transaction,
          at: new Date(donation.at).toISOString(),
        },
      },
    };
  },
});
