import type { ApiError } from '../../core/errors.ts';
import type { FaultLog } from './idempotency.ts';

export interface CallResult {
  status: number;
  body: unknown;
  /** The body already serialized (UTF-8 bytes, gzipped bytes), when the handler had it cached. */
  bytes?: Buffer;
  gzipped?: () => Buffer;
  headers: Record<string, string>;
}

/** An error as every surface answers it: the spec's Error body, its headers, the rate headers charged. */
export function renderError(
  error: ApiError,
  request: { requestId: string },
  rateHeaders: Record<string, string> = {},
): CallResult {
  return {
    status: error.status,
    body: error.body(request.requestId),
    headers: { ...rateHeaders, ...error.headers() },
  };
}

let unavailableLoggedAt = 0;
let unavailableSuppressed = 0;

/**
 * While the database is away every request fails the same way: one warn line per 10 s (with how many
 * were left out) says so without flooding the log.
 */
export function logUnavailable(log: FaultLog | undefined, error: unknown): void {
  const now = Date.now();
  if (now - unavailableLoggedAt < 10_000) {
    unavailableSuppressed++;
    return;
  }
  const details = {
    cause: (error as { message?: string })?.message,
    code: (error as { code?: string })?.code,
    suppressed: unavailableSuppressed,
  };
  unavailableLoggedAt = now;
  unavailableSuppressed = 0;
  if (log?.warn) log.warn(details, 'database unavailable: answering 503');
  else log?.error(details, 'database unavailable: answering 503');
}
