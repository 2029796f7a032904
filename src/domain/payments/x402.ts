import {
  type HTTPAdapter,
  type HTTPRequestContext,
  x402HTTPResourceServer,
  x402ResourceServer,
} from '@x402/core/server';
import type { Network, Price } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { FacilitatorUnusable, OutboundFacilitatorClient } from './facilitator.ts';
import { DONATE_PATH, DONATION_DESCRIPTION, offeredAmountsCents, type PaymentSettings } from './terms.ts';

const ROUTE = `POST ${DONATE_PATH}`;

/** What the x402 helpers read from a request: the payment header and the amount the donor chose. */
export interface PaymentRequestView {
  paymentHeader?: string;
  amountCents: number;
  url: string;
}

/** The donation request behind an x402 request context (requestContext puts it there). */
function viewOf(context: HTTPRequestContext): PaymentRequestView {
  return (context.adapter.getBody as () => PaymentRequestView)();
}

/** The token amount of `cents` US cents, for a token whose one unit is one dollar. */
export function atomicAmount(cents: number, decimals: number): string {
  return (BigInt(cents) * 10n ** BigInt(decimals - 2)).toString();
}

/** The price the x402 server turns into requirements: the configured token, or the network's default stablecoin. */
function priceOf(settings: PaymentSettings, cents: number): Price {
  const asset = settings.asset;
  if (!asset) return `$${(cents / 100).toFixed(2)}`;
  return {
    amount: atomicAmount(cents, asset.decimals),
    asset: asset.address,
    extra: { name: asset.name, version: asset.version },
  };
}

/** The x402 server for these settings: built once, its facilitator's `/supported` read on first use. */
interface Gateway {
  http: x402HTTPResourceServer;
  ready?: Promise<void>;
}

const gateways = new WeakMap<PaymentSettings, Gateway>();

function gatewayFor(settings: PaymentSettings, payTo: string): Gateway {
  let gateway = gateways.get(settings);
  if (gateway) return gateway;
  const facilitator = new OutboundFacilitatorClient(settings.facilitatorUrl, settings.facilitatorTimeoutMs);
  const server = new x402ResourceServer(facilitator).register(
    settings.network as Network,
    new ExactEvmScheme(),
  );
  const http = new x402HTTPResourceServer(server, {
    [ROUTE]: {
      accepts: {
        scheme: 'exact',
        network: settings.network as Network,
        payTo,
        price: (context: HTTPRequestContext) => priceOf(settings, viewOf(context).amountCents),
        maxTimeoutSeconds: settings.maxTimeoutSeconds,
      },
      description: DONATION_DESCRIPTION,
      mimeType: 'application/json',
    },
  });
  gateway = { http };
  gateways.set(settings, gateway);
  return gateway;
}

/** The ready x402 HTTP server; a facilitator that cannot be read now is tried again on the next call. */
export async function paymentServer(
  settings: PaymentSettings,
  payTo: string,
): Promise<x402HTTPResourceServer> {
  const gateway = gatewayFor(settings, payTo);
  if (!gateway.ready) {
    gateway.ready = gateway.http.initialize().catch((error: unknown) => {
      // x402 wraps what reading the facilitator's /supported threw in an Error of its own; a
      // facilitator that is away or broken stays that (a 503 or 502), not a failure of this service.
      const cause = (error as { cause?: unknown } | undefined)?.cause;
      throw cause instanceof FacilitatorUnusable ? cause : error;
    });
    gateway.ready.catch(() => {
      gateway.ready = undefined;
    });
  }
  await gateway.ready;
  return gateway.http;
}

/** The request as x402's HTTP helpers read it, whichever surface carried it. */
export function requestContext(view: PaymentRequestView): HTTPRequestContext {
  const adapter: HTTPAdapter = {
    getHeader: (name) => (name.toLowerCase() === 'payment-signature' ? view.paymentHeader : undefined),
    getMethod: () => 'POST',
    getPath: () => DONATE_PATH,
    getUrl: () => view.url,
    // An API, never the library's HTML paywall.
    getAcceptHeader: () => 'application/json',
    getUserAgent: () => '',
    getBody: () => view,
  };
  return { adapter, path: DONATE_PATH, method: 'POST', paymentHeader: view.paymentHeader };
}

/**
 * The payable resource in x402's discovery shape (`GET /discovery/resources`): its URL and the
 * requirements a donation of each offered amount carries (any amount between the bounds is accepted
 * when the operator set no list; the minimum's requirements stand for them).
 */
export async function payableResources(settings: PaymentSettings, publicUrl: string, now: number) {
  if (!settings.payTo) return [];
  const server = await paymentServer(settings, settings.payTo);
  const accepts = [];
  for (const cents of offeredAmountsCents(settings)) {
    const requirements = await server.server.buildPaymentRequirements({
      scheme: 'exact',
      payTo: settings.payTo,
      price: priceOf(settings, cents),
      network: settings.network as Network,
      maxTimeoutSeconds: settings.maxTimeoutSeconds,
    });
    accepts.push(...requirements);
  }
  return [
    {
      resource: `${publicUrl}${DONATE_PATH}`,
      type: 'http' as const,
      x402Version: 2,
      accepts,
      lastUpdated: new Date(now).toISOString(),
      metadata: {
        description: DONATION_DESCRIPTION,
        method: 'POST',
        mimeType: 'application/json',
        input: { amount_usd: 'number, required', name: 'string', message: 'string', anonymous: 'boolean' },
        amounts_usd: settings.allowedAmountsCents.map((c) => c / 100),
        minimum_usd: settings.minimumCents / 100,
        maximum_usd: settings.maximumCents / 100,
      },
    },
  ];
}
