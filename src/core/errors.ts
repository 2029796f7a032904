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
import { ApiError } from './api-error.ts';
import { apiError } from './error-catalogue.ts';

export { ApiError, ERROR_KINDS, type ErrorKind, type ErrorOptions, StartRefused } from './api-error.ts';
export {
  apiError,
  type ErrorCode,
  errorBody,
  UNAVAILABLE_RETRY_SECONDS,
  UNWRITABLE_RETRY_SECONDS,
} from './error-catalogue.ts';

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

/** The failures named most often, each one code of the catalogue. */
export const errors = {
  validation: (message: string, extra?: { field?: unknown }) =>
    apiError('validation_failed', { message, extra }),
  invalidJson: (detail?: string) => apiError('invalid_json', { detail }),
  /** The database (or another part the request needs) is away for now; the caller may retry. */
  unavailable: () => apiError('service_unavailable', {}),
  /** The request's transaction lost to concurrent writes and was rolled back; the caller may retry. */
  contended: () => apiError('service_unavailable', { contended: true }),
  /** A write waited past its bound for a lock another transaction held and was rolled back (or never ran). */
  lockWait: (boundMs?: number) => apiError('database_busy', { boundMs }),
  /** The database answers but cannot store writes now (a full disk, failing or read-only storage). */
  unwritable: () => apiError('storage_unavailable'),
  /** A 5xx never says what went wrong inside; the request id ties it to the log line. */
  internal: (detail?: string) => apiError('internal_error', { extra: detail ? { detail } : undefined }),
};
