// The x402 donation settings: where payments are verified and settled, on which network, in
// which token, to which address, and which amounts are accepted. Without X402_PAY_TO the service takes
// no payment (setup-check and the boot line say so).
import {
  baseUrl,
  durationMs,
  integer,
  type OptionalGroup,
  refuse,
  required,
  type Setting,
  setting,
} from './settings.ts';

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

function address<Required extends boolean>(spec: { env: string; description: string; required: Required }) {
  const { required, ...text } = spec;
  return setting<Required extends true ? string : string | undefined>(
    {
      ...text,
      group: 'payments',
      trim: true,
      accepts: '0x-prefixed 20-byte hex address',
      defaultText: 'unset',
    },
    (raw) => {
      if (raw === undefined && !required) return undefined as never;
      if (raw === undefined || !ADDRESS.test(raw))
        throw refuse({ ...text, group: 'payments' }, 'a 0x address', raw);
      return raw as never;
    },
  );
}

function usdCents(raw: string, env: string): number {
  const trimmed = raw.trim();
  if (!/^\d+(\.\d{1,2})?$/.test(trimmed) || Number(trimmed) <= 0)
    throw new Error(`${env} must be a positive USD amount with at most two decimals (got "${raw}")`);
  return Math.round(Number(trimmed) * 100);
}

function usd(spec: { env: string; default: string; description: string }): Setting<number> {
  return setting(
    {
      ...spec,
      group: 'payments',
      trim: true,
      accepts: 'USD amount (`5`, `2.50`)',
      defaultText: `\`${spec.default}\``,
    },
    (raw) => usdCents(raw ?? spec.default, spec.env),
  );
}

/** A token of the operator's choice instead of the network's default stablecoin: its EIP-712 domain too. */
export const PAYMENT_ASSET_SCHEMA: OptionalGroup<{
  address: Setting<string>;
  name: Setting<string>;
  version: Setting<string>;
  decimals: Setting<number>;
}> = {
  kind: 'optional-group',
  requires: ['address', 'name', 'version'],
  settings: {
    address: address({
      env: 'X402_ASSET',
      required: true,
      description:
        'Token contract donations are paid in (EIP-3009 `transferWithAuthorization`). Unset: the x402 ' +
        'library’s default USD stablecoin for `X402_NETWORK` (USDC on Base and Base Sepolia). Set it ' +
        'together with `X402_ASSET_NAME` and `X402_ASSET_VERSION`.',
    }),
    name: required({
      env: 'X402_ASSET_NAME',
      group: 'payments',
      trim: true,
      description: 'The token’s EIP-712 domain name (USDC: `USDC` on Base Sepolia, `USD Coin` on Base).',
    }),
    version: required({
      env: 'X402_ASSET_VERSION',
      group: 'payments',
      trim: true,
      description: 'The token’s EIP-712 domain version (USDC: `2`).',
    }),
    decimals: integer({
      env: 'X402_ASSET_DECIMALS',
      group: 'payments',
      default: 6,
      min: 2,
      description: 'The token’s decimals; one token unit is taken to be one US dollar.',
    }),
  },
};

export const PAYMENTS_SCHEMA = {
  facilitatorUrl: baseUrl({
    env: 'X402_FACILITATOR_URL',
    group: 'payments',
    trim: true,
    default: 'https://x402.org/facilitator',
    description:
      'The x402 facilitator that verifies and settles donations (`/supported`, `/verify`, `/settle`). ' +
      'The default is the public testnet facilitator.',
  }),
  facilitatorTimeoutMs: durationMs({
    env: 'X402_FACILITATOR_TIMEOUT_MS',
    group: 'payments',
    default: 10_000,
    min: 100,
    description:
      'Deadline of one call to the facilitator. Past it the donation is answered 503; a settlement ' +
      'whose answer never came is reconciled later (docs/payments.md).',
  }),
  network: setting(
    {
      env: 'X402_NETWORK',
      group: 'payments',
      trim: true,
      accepts: 'CAIP-2 EVM network, `eip155:<chain id>`',
      defaultText: '`eip155:84532` (Base Sepolia, a testnet)',
      description: 'Network donations are paid on. `eip155:8453` is Base mainnet (real money).',
    },
    (raw) => {
      const value = raw ?? 'eip155:84532';
      if (!/^eip155:\d+$/.test(value))
        throw new Error(`X402_NETWORK must be an EVM network as eip155:<chain id> (got "${value}")`);
      return value;
    },
  ),
  asset: PAYMENT_ASSET_SCHEMA,
  payTo: address({
    env: 'X402_PAY_TO',
    required: false,
    description: 'Address donations are paid to. Unset: the service takes no payment (402 is never offered).',
  }),
  allowedAmountsCents: setting(
    {
      env: 'X402_AMOUNTS_USD',
      group: 'payments',
      trim: true,
      accepts: 'comma-separated USD amounts',
      defaultText: 'unset (any amount between the minimum and the maximum)',
      description: 'The only amounts a donor may choose, e.g. `1,5,20`.',
    },
    (raw) =>
      [
        ...new Set(
          (raw ?? '')
            .split(',')
            .filter((item) => item.trim() !== '')
            .map((item) => usdCents(item, 'X402_AMOUNTS_USD')),
        ),
      ].sort((a, b) => a - b),
  ),
  minimumCents: usd({ env: 'X402_MIN_USD', default: '1', description: 'Smallest donation accepted.' }),
  maximumCents: usd({ env: 'X402_MAX_USD', default: '1000', description: 'Largest donation accepted.' }),
  maxTimeoutSeconds: integer({
    env: 'X402_MAX_TIMEOUT_SECONDS',
    group: 'payments',
    default: 300,
    min: 30,
    description:
      'How long a donor’s signed authorization may take to reach settlement (`maxTimeoutSeconds`).',
  }),
};
