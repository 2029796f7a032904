import { LockWaitTimedOut } from '../storage/engine/write-batcher.ts';
import {
  CONNECTION_EXCEPTION_CLASS,
  CONTENTION_SQLSTATES,
  isSqliteBusy,
  isStorageUnwritable,
  LOCK_TIMEOUT_SQLSTATE,
  UNAVAILABLE_SQLSTATES,
  UNSTORABLE_TEXT_SQLSTATES,
} from '../storage/sqlstates.ts';
import type { PolicyOutcome, RateInfo } from './rate-limit.ts';

/** The closed set of machine-readable failure classes (spec 2.2 error_kind). */
export const ERROR_KINDS = [
  'validation',
  'invalid_json',
  'unsupported_media_type',
  'payload_too_large',
  'unauthorized',
  'forbidden',
  'insufficient_scope',
  'tier',
  'not_found',
  'conflict',
  'no_vcs_link',
  'gone',
  'rate_limit',
  'slow_down',
  'idempotency_conflict',
  'idempotency_in_flight',
  'sandbox',
  'signature',
  'upstream',
  'unavailable',
  // The request did not arrive in full in time (408).
  'timeout',
  // x402: the resource needs a payment, or the payment offered was refused (402 with PAYMENT-REQUIRED).
  'payment_required',
  'internal',
] as const;

export type ErrorKind = (typeof ERROR_KINDS)[number];

export interface ErrorOptions {
  message?: string;
  /** Extra context keys merged into the body (limit, example, denied_scopes, …). */
  extra?: Record<string, unknown>;
  /** Rejected by the bearer/session gate: the body carries ok:false (spec 5.11). */
  authGate?: boolean;
  headers?: Record<string, string>;
  rate?: RateInfo;
  retryAfterSeconds?: number;
  /** Quotas a handler counted before failing, so the RateLimit headers name the one exhausted. */
  policies?: PolicyOutcome[];
}

/** Every failure an operation reports travels as an ApiError and is rendered once per surface. */
/** A setting the process cannot work with: `serve` prints the message (a sentence) and exits 1. */
export class StartRefused extends Error {}

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly kind: ErrorKind;
  readonly options: ErrorOptions;

  constructor(status: number, code: string, kind: ErrorKind, options: ErrorOptions = {}) {
    // An ApiError is an expected outcome, not a bug: skip the stack trace, which costs more than the
    // rest of a rejected request (a flood of 429s must stay cheap).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(options.message ?? code);
    Error.stackTraceLimit = limit;
    this.status = status;
    this.code = code;
    this.kind = kind;
    this.options = options;
  }

  /** The spec's Error shape (2.2). */
  body(requestId?: string): Record<string, unknown> {
    const body: Record<string, unknown> = { error: this.code, error_kind: this.kind };
    if (this.options.authGate) body.ok = false;
    if (this.options.message) body.message = this.options.message;
    if (this.options.rate) body.rate = this.options.rate;
    if (this.options.retryAfterSeconds !== undefined)
      body.retry_after_seconds = this.options.retryAfterSeconds;
    Object.assign(body, this.options.extra);
    if (requestId) body.request_id = requestId;
    return body;
  }

  headers(): Record<string, string> {
    const headers = { ...this.options.headers };
    if (this.options.retryAfterSeconds !== undefined)
      headers['retry-after'] = String(this.options.retryAfterSeconds);
    return headers;
  }
}

/** Seconds a 503 asks the caller to wait: a restarting database or cache is usually back within that. */
export const UNAVAILABLE_RETRY_SECONDS = 2;

/** Seconds a 503 for storage that cannot write asks: freeing a disk takes a person longer than a restart. */
export const UNWRITABLE_RETRY_SECONDS = 30;

/** SQLite's busy_timeout (src/storage/database.ts): how long a write waits for another process's lock. */
const SQLITE_BUSY_TIMEOUT_MS = 5000;

const UNAVAILABLE_ERRNOS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
/** What node-postgres and its pool say when the connection is gone or cannot be had in time. */
const UNAVAILABLE_MESSAGES = [
  /^Connection terminated/,
  /timeout exceeded when trying to connect/,
  /^Query read timeout/,
  /is not queryable/,
  /Connection is closed/,
];

/**
 * True when the error says a part the service stands on (PostgreSQL, Redis) is unreachable or
 * restarting, so the request may succeed if repeated shortly: connection refused or reset, the
 * server's shutdown codes, the pool's acquire timeout, a statement or query timeout.
 */
export function isDependencyUnavailable(error: unknown): boolean {
  if (!error || typeof error !== 'object') return false;
  const { code, message, errors: inner } = error as { code?: unknown; message?: unknown; errors?: unknown };
  if (typeof code === 'string') {
    if (UNAVAILABLE_ERRNOS.has(code) || UNAVAILABLE_SQLSTATES.has(code)) return true;
    if (code.startsWith(CONNECTION_EXCEPTION_CLASS)) return true;
  }
  if (typeof message === 'string' && UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(message)))
    return true;
  // Node reports a refused connection to every address of a name as an AggregateError.
  return Array.isArray(inner) && inner.some(isDependencyUnavailable);
}

/** True when the transaction lost a lock cycle, a serialization race or a lock wait to other writes. */
export function isContention(error: unknown): boolean {
  if (!error || typeof error !== 'object') return false;
  const { code } = error as { code?: unknown };
  return (typeof code === 'string' && CONTENTION_SQLSTATES.has(code)) || isSqliteBusy(error);
}

/** True when a write waited past its bound for a lock another transaction (or process) held. */
export function isLockWait(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === LOCK_TIMEOUT_SQLSTATE || isSqliteBusy(error);
}

export { isStorageUnwritable };

/** Any failure above: nothing is wrong with the request, and repeated (later) it may succeed. */
export function isTransientFailure(error: unknown): boolean {
  return isDependencyUnavailable(error) || isContention(error) || isStorageUnwritable(error);
}

/** True when the database refused a value of the request's text (see UNSTORABLE_TEXT_SQLSTATES). */
export function isUnstorableText(error: unknown): boolean {
  if (!error || typeof error !== 'object') return false;
  const { code } = error as { code?: unknown };
  return typeof code === 'string' && UNSTORABLE_TEXT_SQLSTATES.has(code);
}

/**
 * The one place a thrown value becomes an answer: an ApiError as it is; a dependency that is away, a
 * write that lost to concurrent ones, a write that waited too long for a lock, storage that cannot
 * write now, each as 503 (with Retry-After) with its own code or message; text the database cannot
 * store as 400 validation_failed; anything else as 500.
 */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (isDependencyUnavailable(error)) return errors.unavailable();
  if (isStorageUnwritable(error)) return errors.unwritable();
  if (error instanceof LockWaitTimedOut) return errors.lockWait(error.boundMs);
  if (isSqliteBusy(error)) return errors.lockWait(SQLITE_BUSY_TIMEOUT_MS);
  if (isLockWait(error)) return errors.lockWait();
  if (isContention(error)) return errors.contended();
  if (isUnstorableText(error))
    return errors.validation(
      'The request holds text the database cannot store (such as the NUL character U+0000).',
    );
  return errors.internal();
}

export const errors = {
  validation: (message: string, extra?: Record<string, unknown>) =>
    new ApiError(400, 'validation_failed', 'validation', { message, extra }),
  invalidJson: (message = 'The request body is not valid JSON.') =>
    new ApiError(400, 'invalid_json', 'invalid_json', { message }),
  notFound: (code: string, message: string) => new ApiError(404, code, 'not_found', { message }),
  conflict: (code: string, message: string, extra?: Record<string, unknown>) =>
    new ApiError(409, code, 'conflict', { message, extra }),
  gone: (code: string, message: string) => new ApiError(410, code, 'gone', { message }),
  unauthorized: (code: string, message: string) =>
    new ApiError(401, code, 'unauthorized', { message, authGate: true }),
  /** The database (or another part the request needs) is away for now; the caller may retry. */
  unavailable: () =>
    new ApiError(503, 'service_unavailable', 'unavailable', {
      message: 'The service cannot reach its database right now; retry shortly.',
      retryAfterSeconds: UNAVAILABLE_RETRY_SECONDS,
    }),
  /** The request's transaction lost to concurrent writes and was rolled back; the caller may retry. */
  contended: () =>
    new ApiError(503, 'service_unavailable', 'unavailable', {
      message: 'The request lost a race with concurrent writes and was rolled back; retry shortly.',
      retryAfterSeconds: UNAVAILABLE_RETRY_SECONDS,
    }),
  /** A write waited past its bound for a lock another transaction held and was rolled back (or never ran). */
  lockWait: (boundMs?: number) =>
    new ApiError(503, 'database_busy', 'unavailable', {
      message: `A write waited ${boundMs === undefined ? 'too long' : `longer than ${boundMs} ms`} for a lock held by another transaction and was rolled back; retry shortly.`,
      retryAfterSeconds: UNAVAILABLE_RETRY_SECONDS,
    }),
  /** The database answers but cannot store writes now (a full disk, failing or read-only storage). */
  unwritable: () =>
    new ApiError(503, 'storage_unavailable', 'unavailable', {
      message:
        'The database cannot store writes right now (its disk is full or its storage refuses writes); retry later.',
      retryAfterSeconds: UNWRITABLE_RETRY_SECONDS,
    }),
  /** A 5xx never says what went wrong inside; the request id ties it to the log line. */
  internal: (detail?: string) =>
    new ApiError(500, 'internal_error', 'internal', {
      message: 'The server failed to handle this request.',
      extra: detail ? { detail } : undefined,
    }),
};
