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

/** A setting the process cannot work with: `serve` prints the message (a sentence) and exits 1. */
export class StartRefused extends Error {}

/**
 * Every failure an operation reports travels as an ApiError and is rendered once per surface. Built
 * by `apiError` of core/error-catalogue.ts, which takes the status, kind and message from the one
 * declaration of the code (test/error-catalogue.test.ts refuses a `new ApiError` anywhere else).
 */
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
