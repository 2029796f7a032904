import type { FacilitatorClient } from '@x402/core/server';
import {
  FacilitatorResponseError,
  type PaymentPayload,
  type PaymentRequirements,
  SettleError,
  type SettleResponse,
  type SupportedResponse,
  VerifyError,
  type VerifyResponse,
} from '@x402/core/types';
import { OutboundError, outboundFetch } from '../../outbound.ts';

/** How a call to the facilitator failed when it gave no usable answer: away or slow (503), or broken (502). */
export type FacilitatorFailure = 'unavailable' | 'bad_answer';

/**
 * The facilitator gave no usable answer. It is the library's FacilitatorResponseError, so x402's
 * resource server passes it up instead of turning it into a 402 (the payer did nothing wrong).
 */
export class FacilitatorUnusable extends FacilitatorResponseError {
  readonly failure: FacilitatorFailure;

  constructor(failure: FacilitatorFailure, message: string) {
    super(message);
    this.failure = failure;
    this.name = 'FacilitatorUnusable';
  }
}

/** A facilitator's answers are small JSON documents. */
const MAX_ANSWER_BYTES = 256 * 1024;

/**
 * The x402 facilitator HTTP API (`GET /supported`, `POST /verify`, `POST /settle`) spoken through
 * src/outbound.ts, so every call has our deadline and size cap. @x402/core's own HTTPFacilitatorClient
 * uses the global fetch and turns a 5xx into an error the resource server answers as a 402; here a
 * facilitator that is down, slow or broken is a FacilitatorUnusable (502/503), while its refusals
 * (`isValid: false`, `success: false`) stay protocol answers.
 */
export class OutboundFacilitatorClient implements FacilitatorClient {
  readonly url: string;
  readonly timeoutMs: number;

  constructor(url: string, timeoutMs: number) {
    this.url = url;
    this.timeoutMs = timeoutMs;
  }

  async getSupported(): Promise<SupportedResponse> {
    const answer = await this.call('supported', 'GET');
    if (answer.status !== 200 || !Array.isArray((answer.body as SupportedResponse | null)?.kinds))
      throw new FacilitatorUnusable('bad_answer', `facilitator /supported answered ${answer.status}`);
    const supported = answer.body as SupportedResponse;
    return {
      kinds: supported.kinds,
      extensions: supported.extensions ?? [],
      signers: supported.signers ?? {},
    };
  }

  async verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse> {
    const answer = await this.call('verify', 'POST', requestBody(payload, requirements));
    const body = answer.body as VerifyResponse | null;
    if (typeof body?.isValid !== 'boolean')
      throw new FacilitatorUnusable(
        'bad_answer',
        `facilitator /verify answered ${answer.status} without isValid`,
      );
    if (answer.status >= 500)
      throw new FacilitatorUnusable('bad_answer', `facilitator /verify answered ${answer.status}`);
    if (answer.status !== 200) throw new VerifyError(answer.status, body);
    return body;
  }

  async settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse> {
    const answer = await this.call('settle', 'POST', requestBody(payload, requirements));
    const body = answer.body as SettleResponse | null;
    if (typeof body?.success !== 'boolean')
      throw new FacilitatorUnusable(
        'bad_answer',
        `facilitator /settle answered ${answer.status} without success`,
      );
    if (answer.status >= 500)
      throw new FacilitatorUnusable('bad_answer', `facilitator /settle answered ${answer.status}`);
    if (answer.status !== 200) throw new SettleError(answer.status, body);
    return { ...body, transaction: body.transaction ?? '', network: body.network ?? requirements.network };
  }

  private async call(path: string, method: 'GET' | 'POST', body?: string) {
    let response: Response;
    try {
      response = await outboundFetch(
        `${this.url}/${path}`,
        { method, headers: body ? { 'content-type': 'application/json' } : {}, body },
        { timeoutMs: this.timeoutMs, maxBytes: MAX_ANSWER_BYTES, maxRedirects: 2 },
      );
    } catch (error) {
      if (error instanceof OutboundError && error.kind === 'too_large')
        throw new FacilitatorUnusable('bad_answer', error.message);
      throw new FacilitatorUnusable('unavailable', (error as Error).message);
    }
    const text = await response.text();
    try {
      return { status: response.status, body: JSON.parse(text) as unknown };
    } catch {
      // A proxy's error page, or a facilitator that crashed mid-answer.
      if (response.status >= 500 || response.status === 429)
        throw new FacilitatorUnusable('unavailable', `facilitator /${path} answered ${response.status}`);
      throw new FacilitatorUnusable(
        'bad_answer',
        `facilitator /${path} answered ${response.status}, not JSON`,
      );
    }
  }
}

function requestBody(payload: PaymentPayload, requirements: PaymentRequirements): string {
  return JSON.stringify({
    x402Version: payload.x402Version,
    paymentPayload: payload,
    paymentRequirements: requirements,
  });
}
