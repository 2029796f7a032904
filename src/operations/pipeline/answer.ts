import { type ApiError, isContention, isLockWait, isStorageUnwritable } from '../../core/errors.ts';
import type { FaultLog } from './idempotency.ts';

export interface CallResult {
  status: number;
  body: unknown;
  /** The body already serialized (UTF-8 bytes, gzipped bytes), when the handler had it cached. */
  bytes?: Buffer;
  /** The same JSON as text, kept for a small answer: REST sends it rather than the bytes. */
  text?: string;
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

/** One warn line per 10 s for each kind of transient failure, with how many were left out. */
const throttles = {
  unavailable: { loggedAt: 0, suppressed: 0, message: 'database unavailable: answering 503' },
  contention: {
    loggedAt: 0,
    suppressed: 0,
    message: 'lost to concurrent writes and rolled back: answering 503',
  },
  lockWait: {
    loggedAt: 0,
    suppressed: 0,
    message: 'a write waited too long for a lock held by another transaction: answering 503 database_busy',
  },
};

/**
 * A 503 said in the log without flooding it: while the database is away every request fails the
 * same way, and a storm of writes on the same rows can lose many lock races at once. Storage that
 * cannot write is logged by the storage condition, once as it starts and once as it ends.
 */
export function logUnavailable(log: FaultLog | undefined, error: unknown): void {
  if (isStorageUnwritable(error)) return;
  const throttle = isLockWait(error)
    ? throttles.lockWait
    : isContention(error)
      ? throttles.contention
      : throttles.unavailable;
  const now = Date.now();
  if (now - throttle.loggedAt < 10_000) {
    throttle.suppressed++;
    return;
  }
  const details = {
    cause: (error as { message?: string })?.message,
    code: (error as { code?: string })?.code,
    suppressed: throttle.suppressed,
  };
  throttle.loggedAt = now;
  throttle.suppressed = 0;
  if (log?.warn) log.warn(details, throttle.message);
  else log?.error(details, throttle.message);
}
