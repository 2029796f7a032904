import { ApiError, UNAVAILABLE_RETRY_SECONDS } from '../../core/errors.ts';
import type { FacilitatorFailure } from './facilitator.ts';

/**
 * A facilitator that gave no usable answer, as every caller hears it (docs/payments.md): away or
 * silent, 503 facilitator_unavailable with Retry-After; an error or nonsense, 502 facilitator_error.
 * `consequence` says what it meant for this request. Apart from facilitator.ts, which loads the x402
 * library, so that discovery can answer without loading it.
 */
export function facilitatorRefusal(failure: FacilitatorFailure, consequence: string): ApiError {
  if (failure === 'unavailable')
    return new ApiError(503, 'facilitator_unavailable', 'unavailable', {
      message: `The payment facilitator cannot be reached or did not answer in time; ${consequence}`,
      retryAfterSeconds: UNAVAILABLE_RETRY_SECONDS,
    });
  return new ApiError(502, 'facilitator_error', 'upstream', {
    message: `The payment facilitator answered with an error; ${consequence}`,
  });
}
