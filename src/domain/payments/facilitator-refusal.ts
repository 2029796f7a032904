import { type ApiError, apiError } from '../../core/errors.ts';
import type { FacilitatorFailure } from './facilitator.ts';

/**
 * A facilitator that gave no usable answer, as every caller hears it (docs/payments.md): away or
 * silent, 503 facilitator_unavailable with Retry-After; an error or nonsense, 502 facilitator_error.
 * `consequence` says what it meant for this request. Apart from facilitator.ts, which loads the x402
 * library, so that discovery can answer without loading it.
 */
export function facilitatorRefusal(failure: FacilitatorFailure, consequence: string): ApiError {
  if (failure === 'unavailable') return apiError('facilitator_unavailable', { consequence });
  return apiError('facilitator_error', { consequence });
}
