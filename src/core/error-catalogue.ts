import { ApiError, type ErrorKind } from './api-error.ts';
import { RPC } from './json-rpc-codes.ts';
import type { PolicyOutcome, RateInfo } from './rate-limit.ts';

/** Seconds a 503 asks the caller to wait: a restarting database or cache is usually back within that. */
export const UNAVAILABLE_RETRY_SECONDS = 2;

/** Seconds a 503 for storage that cannot write asks: freeing a disk takes a person longer than a restart. */
export const UNWRITABLE_RETRY_SECONDS = 30;

/** Seconds a caller waits before repeating a request whose Idempotency-Key another request holds. */
const IN_FLIGHT_RETRY_SECONDS = 1;

/** The sentence a 401 for a refused signature says when the throw site has no better one. */
const SIGN_HINT =
  'Sign the request with the key bound to this token (RFC 9421: label sig1, alg "ed25519", the key id as keyid; see docs/signed-requests.md).';

/** One code as it is declared: everything an answer carrying it says besides the throw site's facts. */
export interface ErrorEntry {
  /** The HTTP status REST answers (MCP and A2A carry it too); absent: an A2A-only code, answered in JSON-RPC. */
  status?: number;
  kind: ErrorKind;
  /** What the code means, for the table in docs/api.md. */
  meaning: string;
  /** The message: a fixed sentence, or a template of the throw site's params; absent, the site writes it. */
  message?: string | ((params: never) => string);
  /** The body fields it carries beyond error, error_kind, message and request_id. */
  fields?: readonly string[];
  /** Refused by the bearer/session gate: the body carries ok:false (spec 5.11). */
  authGate?: true;
  /** Retry-After (and retry_after_seconds) unless the throw site names its own. */
  retryAfterSeconds?: number;
  /** Headers the throw site adds (Retry-After when it has no default, x402's PAYMENT-REQUIRED). */
  headers?: readonly string[];
  /** The JSON-RPC code A2A answers with, when not the one its HTTP status maps to (rpcCodeFor). */
  rpc?: number;
  /** A family of codes: the code on the wire is built from the throw site's params. */
  wireCode?: (params: never) => string;
  /** Shown in the table for a family instead of the key. */
  wireCodeShown?: string;
  /** The status is the throw site's (what a framework or library answered); `status` is the usual one. */
  statusFromSite?: true;
}

/**
 * Every error code the service answers with, declared once. Throw sites name a code (`apiError`);
 * the OpenAPI error responses, the A2A and MCP mapping and the table in docs/api.md are read from
 * here. Adding a code: docs/development.md.
 */
export const ERROR_CATALOGUE = {
  // Requests that do not read.
  validation_failed: {
    status: 400,
    kind: 'validation',
    meaning: 'The input breaks the operation’s schema or rules; `field` names the part',
    fields: ['field'],
  },
  invalid_json: {
    status: 400,
    kind: 'invalid_json',
    meaning: 'The body is not JSON, is empty, or holds a `__proto__` / `constructor.prototype` key',
    message: (p: { detail?: string }) => p.detail ?? 'The request body is not valid JSON.',
  },
  bad_request: {
    status: 400,
    statusFromSite: true,
    kind: 'validation',
    meaning: 'The HTTP request itself is malformed (status as the HTTP server or framework found it)',
  },
  unsupported_media_type: {
    status: 415,
    kind: 'unsupported_media_type',
    meaning: 'A body that is not sent as application/json',
    message: 'Send the body as JSON with Content-Type: application/json.',
  },
  payload_too_large: {
    status: 413,
    kind: 'payload_too_large',
    meaning: 'The body is larger than the operation accepts (`limit` bytes)',
    message: (p: { limit?: number }) =>
      p.limit === undefined
        ? 'The request body is larger than this operation accepts.'
        : `The request body is larger than this operation accepts (${p.limit} bytes).`,
    fields: ['limit'],
  },
  headers_too_large: {
    status: 431,
    kind: 'payload_too_large',
    meaning: 'The request headers are larger than the HTTP server accepts',
    message: 'The request headers are larger than the server accepts.',
  },
  request_timeout: {
    status: 408,
    kind: 'timeout',
    meaning: 'The request did not arrive in full within the time the server allows',
    message: 'The request did not arrive in full within the time the server allows; send it again.',
  },
  not_batchable: {
    status: 400,
    kind: 'validation',
    meaning: 'A batch item names a path that is not one of the batchable reads',
    message: (p: { paths: readonly (string | undefined)[] }) =>
      `Only these reads can be batched: ${p.paths.join(', ')}.`,
  },
  not_found: {
    status: 404,
    kind: 'not_found',
    meaning: 'Nothing is served at the path, or filed under the record named',
  },

  // Credentials.
  missing_token: {
    status: 401,
    kind: 'unauthorized',
    authGate: true,
    meaning: 'No agent token was sent where one is needed',
  },
  invalid_authorization: {
    status: 401,
    kind: 'unauthorized',
    authGate: true,
    meaning: 'The Authorization header is not `Bearer <token>`',
    message: 'Send the token as "Authorization: Bearer agt_…".',
  },
  invalid_token: {
    status: 401,
    kind: 'unauthorized',
    authGate: true,
    meaning: 'The bearer is not an agent token, or no token has it',
  },
  token_revoked: {
    status: 401,
    kind: 'unauthorized',
    authGate: true,
    meaning: 'The bearer token has been revoked',
    message: 'The bearer token has been revoked.',
  },
  session_expired: {
    status: 401,
    kind: 'unauthorized',
    authGate: true,
    meaning: 'The browser session has expired',
    message: 'The browser session has expired; sign in again.',
  },
  session_required: {
    status: 401,
    kind: 'unauthorized',
    authGate: true,
    meaning: 'The operation needs a signed-in browser session, not an agent token',
    message: 'This operation needs a signed-in browser session; agent tokens are not accepted here.',
  },
  signature_verification_failed: {
    status: 401,
    kind: 'signature',
    authGate: true,
    meaning: 'The request’s RFC 9421 signature is missing, malformed or does not verify; the code names why',
    wireCode: (p: { reason: string }) => `signature verification failed: ${p.reason}`,
    wireCodeShown: 'signature verification failed: <reason>',
    message: (p: { hint?: string }) => p.hint ?? SIGN_HINT,
    fields: ['expected_authority', 'received_authority'],
  },
  insufficient_scope: {
    status: 403,
    kind: 'insufficient_scope',
    authGate: true,
    meaning: 'The token lacks the scope the operation needs (`required_scope`)',
    message: (p: { scope: string }) =>
      `This token lacks the scope ${p.scope}. Scopes are fixed at mint: register a new token that includes it.`,
    fields: ['tier', 'required_scope'],
  },
  tier_insufficient: {
    status: 403,
    kind: 'tier',
    authGate: true,
    meaning: 'The member’s tier no longer grants the scope the operation needs',
    message: (p: { scope: string; requiredTier: string | undefined; tier: string | undefined }) =>
      `Scope ${p.scope} needs tier ${p.requiredTier ?? 'unknown'}; the member is on tier ${p.tier}.`,
    fields: ['tier', 'required_scope', 'required_tier'],
  },
  cross_site_request: {
    status: 403,
    kind: 'forbidden',
    meaning: 'A session-authenticated write that may come from another site',
    message: (p: { reason: string }) =>
      `Refused: this operation is authenticated by the browser session cookie, and the request may come from another site. ${p.reason} Call it from this service's own pages, or with an agent token.`,
  },
  sandbox_denied: {
    status: 403,
    kind: 'sandbox',
    meaning: 'A sandbox token called an operation sandbox tokens cannot call',
    message: 'Sandbox tokens cannot call this operation.',
    fields: ['tier'],
  },

  // Limits and repeats.
  rate_limited: {
    status: 429,
    kind: 'rate_limit',
    meaning: 'A rate limit or quota is exhausted; Retry-After says when to come back',
    fields: ['rate', 'limit', 'window', 'policy', 'violated_policies'],
    headers: ['Retry-After'],
  },
  slow_down: {
    status: 429,
    kind: 'slow_down',
    meaning: 'The device grant was polled faster than its `interval`',
    message: (p: { interval: number }) =>
      `Polling too fast: wait at least ${p.interval} seconds between polls.`,
    fields: ['interval'],
    headers: ['Retry-After'],
  },
  invalid_idempotency_key: {
    status: 400,
    kind: 'validation',
    meaning: 'The Idempotency-Key header is not 1 to 255 visible ASCII characters',
    message: 'Idempotency-Key must be 1 to 255 visible ASCII characters.',
  },
  idempotency_key_reused: {
    status: 422,
    kind: 'idempotency_conflict',
    meaning: 'The Idempotency-Key was already used with a different body',
    message: 'This Idempotency-Key was already used with a different request body.',
  },
  idempotency_in_flight: {
    status: 409,
    kind: 'idempotency_in_flight',
    meaning: 'A request with the same Idempotency-Key is still being processed',
    message: (p: { contended?: true }) =>
      p.contended
        ? 'The Idempotency-Key is contended; retry shortly.'
        : 'A request with this Idempotency-Key is still being processed; retry shortly.',
    retryAfterSeconds: IN_FLIGHT_RETRY_SECONDS,
  },
  idempotency_answer_lost: {
    status: 409,
    kind: 'idempotency_conflict',
    meaning: 'The first request with the key was applied but its answer was not recorded',
    message:
      'The first request with this Idempotency-Key was applied, but its answer was not recorded (the ' +
      'service stopped in between). It is not applied again; read the resource to see the result.',
  },

  // Input an operation refuses.
  unknown_tier: {
    status: 400,
    kind: 'validation',
    meaning: 'No tier has the name given',
    fields: ['field'],
  },
  missing_scopes: {
    status: 400,
    kind: 'validation',
    meaning: 'A signup named no scopes',
    message: 'Name the scopes the agent needs (1 to 64), for example one of the starter sets.',
    fields: ['example', 'starter_sets'],
  },
  unknown_scopes: {
    status: 400,
    kind: 'validation',
    meaning: 'A signup named scopes that do not exist',
    message: (p: { unknown: readonly string[] }) => `Unknown scopes: ${p.unknown.join(', ')}.`,
    fields: ['unknown_scopes', 'valid_scopes', 'example'],
  },
  invalid_category: {
    status: 400,
    kind: 'validation',
    meaning: 'A feedback category that is not one of the list',
    message: (p: { categories: readonly string[] }) =>
      `category must be one of ${p.categories.join(', ')} (or send the class as kind).`,
    fields: ['field', 'valid_kinds'],
  },
  invalid_story: {
    status: 400,
    kind: 'validation',
    meaning: 'A highlight story that breaks the story rules',
    fields: ['field'],
  },
  missing_url: {
    status: 400,
    kind: 'validation',
    meaning: 'An event lookup without the event URL',
    message: 'Pass the event-platform URL as ?url= (alias ?luma=).',
  },
  non_canonical_url: {
    status: 400,
    kind: 'validation',
    meaning: 'An event URL that is not an event page on an accepted host',
    message: (p: { subject: string; hosts: readonly string[] }) =>
      `${p.subject} must be an event page on ${p.hosts.join(' or ')}.`,
    fields: ['accepted_hosts'],
  },
  start_in_past: {
    status: 400,
    kind: 'validation',
    meaning: 'A start time that is not in the future',
    message: (p: { field: string }) => `${p.field} must be in the future.`,
  },
  invalid_time_range: {
    status: 400,
    kind: 'validation',
    meaning: 'An end time that is not after the start',
    message: (p: { start: string; end: string }) => `${p.end} must be after ${p.start}.`,
  },
  booking_too_long: {
    status: 400,
    kind: 'validation',
    meaning: 'A booking longer than the longest allowed',
    message: (p: { hours: number }) => `A booking lasts at most ${p.hours} hours.`,
  },
  email_required: {
    status: 400,
    kind: 'validation',
    meaning: 'An agent’s booking without the email the confirmation goes to',
    message: 'Agent callers must include email: where the confirmation goes.',
    fields: ['field'],
  },
  tier_not_requestable: {
    status: 400,
    kind: 'validation',
    meaning: 'A tier the member cannot request',
    fields: ['current_tier', 'requestable'],
  },
  invalid_key: {
    status: 400,
    kind: 'validation',
    meaning: 'A signing key that is not an Ed25519 public JWK',
  },

  // Things that are not there.
  unknown_member: { status: 404, kind: 'not_found', meaning: 'No member has the id or email' },
  unknown_device_code: {
    status: 404,
    kind: 'not_found',
    meaning: 'No device grant has the code',
    message: 'No grant has this device code.',
  },
  unknown_story: {
    status: 404,
    kind: 'not_found',
    meaning: 'No story with the id was submitted on behalf of the member',
    message: 'No story with this id was submitted on behalf of this member.',
  },
  unknown_resource: {
    status: 404,
    kind: 'not_found',
    meaning: 'No bookable resource has the id',
    message: 'No bookable resource has this id; see GET /api/resources/list.',
  },
  booking_not_found: {
    status: 404,
    kind: 'not_found',
    meaning: 'No booking of the caller has the id (another member’s booking is answered so too)',
    message: 'No booking of yours has this id; see your bookings at /bookings.',
  },
  event_not_found: {
    status: 404,
    kind: 'not_found',
    meaning: 'No upcoming event with the URL is in the cache',
    message: 'No upcoming event with this URL is in the cache.',
  },
  issue_not_found: {
    status: 404,
    kind: 'not_found',
    meaning: 'No newsletter issue has the slug',
    message: (p: { slug: string }) =>
      `There is no newsletter issue "${p.slug}"; ic_signal_list_issues lists them.`,
  },
  story_not_found: {
    status: 404,
    kind: 'not_found',
    meaning: 'The newsletter issue has no story with the id',
    message: (p: { slug: string; story: string; stories: readonly string[] }) =>
      `Issue "${p.slug}" has no story "${p.story}"; its stories are ${p.stories.join(', ')}.`,
  },
  no_issues: {
    status: 404,
    kind: 'not_found',
    meaning: 'No newsletter issue has been published yet',
    message: 'No newsletter issue has been published yet.',
  },
  presentation_not_found: {
    status: 404,
    kind: 'not_found',
    meaning: 'No presentation has the number',
    message: (p: { number: number }) => `There is no presentation #${p.number}.`,
  },
  no_donation_page: {
    status: 404,
    kind: 'not_found',
    meaning: 'The operator has not published how to give',
    message: 'The operator has not published how to give yet.',
  },
  token_not_found: { status: 404, kind: 'not_found', meaning: 'No live token of the member has the id' },
  payments_not_configured: {
    status: 404,
    kind: 'not_found',
    meaning: 'Donations are not set up on this service',
  },

  // Conflicts and things past their time.
  member_exists: { status: 409, kind: 'conflict', meaning: 'A member with the email already exists' },
  booking_not_cancellable: {
    status: 409,
    kind: 'conflict',
    meaning: 'The booking was declined, so there is nothing to cancel',
    message: (p: { state: string }) =>
      `This booking is ${p.state}; only a queued or confirmed booking can be cancelled.`,
  },
  already_decided: {
    status: 409,
    kind: 'conflict',
    meaning: 'The record was already decided; nothing changed',
    message: (p: { target: string; outcome: string }) =>
      `${p.target} was already decided (${p.outcome}); nothing changed.`,
  },
  story_id_taken: {
    status: 409,
    kind: 'conflict',
    meaning: 'Another member’s story has the id, or the id changed hands during the submission',
    message: (p: { raced?: true }) =>
      p.raced
        ? 'This story id changed hands while it was being submitted; send it again.'
        : 'Another member already submitted a story with this id; use a slug of your own.',
  },
  already_moderated: {
    status: 409,
    kind: 'conflict',
    meaning: 'The story was already moderated',
    message: 'This story was already moderated; submit it under a new id.',
  },
  vcs_account_taken: {
    status: 409,
    kind: 'conflict',
    meaning: 'The code-hosting account is linked to another member',
    message: (p: { login: string }) => `The account ${p.login} is already linked to another member.`,
  },
  no_vcs_link: {
    status: 409,
    kind: 'no_vcs_link',
    meaning: 'Opting in without a linked code-hosting account',
    message:
      'Link a code-hosting account first: sign in at /leaderboard/link (OAuth or a personal access token).',
    fields: ['link_url'],
  },
  key_already_bound: { status: 409, kind: 'conflict', meaning: 'The token already has a signing key' },
  no_signing_key: { status: 409, kind: 'conflict', meaning: 'The token has no signing key to enforce' },
  payment_already_used: {
    status: 409,
    kind: 'conflict',
    meaning: 'The payment was already used, or is being settled by another request',
    message: (p: { settling: boolean }) =>
      p.settling
        ? 'This payment is being settled by another request.'
        : 'This payment was already used; sign a new one to donate again.',
  },
  expired_token: {
    status: 410,
    kind: 'gone',
    meaning: 'The device code expired',
    message: 'The device code expired; start a new grant.',
  },
  access_denied: {
    status: 410,
    kind: 'gone',
    meaning: 'The member declined the device grant',
    message: 'The member declined this grant; start a new grant.',
  },
  already_delivered: {
    status: 410,
    kind: 'gone',
    meaning: 'The device grant’s token was already delivered',
    message: 'This grant was already delivered; start a new grant.',
  },

  // Payments (x402).
  payment_required: {
    status: 402,
    statusFromSite: true,
    kind: 'payment_required',
    meaning:
      'Pay with x402 (`payment_required`), or the payment was refused (the code is x402’s reason); PAYMENT-REQUIRED header',
    wireCode: (p: { code: string }) => p.code,
    wireCodeShown: 'payment_required, or x402’s reason',
    message: (p: { code: string; reason: string }) =>
      p.code === 'payment_required'
        ? 'Pay with x402: sign one of `accepts` and repeat the request with the PAYMENT-SIGNATURE header.'
        : `The payment was refused (${p.reason}). Nothing was charged or recorded.`,
    fields: ['x402Version', 'resource', 'accepts'],
    headers: ['PAYMENT-REQUIRED'],
  },
  facilitator_unavailable: {
    status: 503,
    kind: 'unavailable',
    meaning: 'The payment facilitator cannot be reached or did not answer in time',
    message: (p: { consequence: string }) =>
      `The payment facilitator cannot be reached or did not answer in time; ${p.consequence}`,
    retryAfterSeconds: UNAVAILABLE_RETRY_SECONDS,
  },
  facilitator_error: {
    status: 502,
    kind: 'upstream',
    meaning: 'The payment facilitator answered with an error',
    message: (p: { consequence: string }) =>
      `The payment facilitator answered with an error; ${p.consequence}`,
  },

  // Upstreams and the service itself.
  upstream_error: {
    status: 502,
    kind: 'upstream',
    meaning: 'The language model provider failed to answer',
    message: 'The language model provider failed to answer.',
  },
  upstream_overloaded: {
    status: 503,
    kind: 'upstream',
    meaning: 'The language model provider is overloaded',
    message: 'The language model provider is overloaded; try again shortly.',
    retryAfterSeconds: 30,
  },
  upstream_timeout: {
    status: 504,
    kind: 'upstream',
    meaning: 'The language model provider did not answer in time',
    message: (p: { ms: number }) => `The language model provider did not answer within ${p.ms} ms.`,
  },
  service_unavailable: {
    status: 503,
    kind: 'unavailable',
    meaning: 'The database is unreachable, or the write lost a race with concurrent writes; retry',
    message: (p: { contended?: true }) =>
      p.contended
        ? 'The request lost a race with concurrent writes and was rolled back; retry shortly.'
        : 'The service cannot reach its database right now; retry shortly.',
    retryAfterSeconds: UNAVAILABLE_RETRY_SECONDS,
  },
  database_busy: {
    status: 503,
    kind: 'unavailable',
    meaning: 'A write waited too long for a lock another transaction held',
    message: (p: { boundMs?: number }) =>
      `A write waited ${p.boundMs === undefined ? 'too long' : `longer than ${p.boundMs} ms`} for a lock held by another transaction and was rolled back; retry shortly.`,
    retryAfterSeconds: UNAVAILABLE_RETRY_SECONDS,
  },
  storage_unavailable: {
    status: 503,
    kind: 'unavailable',
    meaning: 'The database cannot store writes now (a full disk, failing or read-only storage)',
    message:
      'The database cannot store writes right now (its disk is full or its storage refuses writes); retry later.',
    retryAfterSeconds: UNWRITABLE_RETRY_SECONDS,
  },
  internal_error: {
    status: 500,
    kind: 'internal',
    meaning: 'The server failed; `request_id` ties the answer to the log line',
    message: 'The server failed to handle this request.',
    fields: ['detail'],
  },

  // A2A only: answered as JSON-RPC errors with the Error body in `data`.
  invalid_params: {
    kind: 'validation',
    rpc: RPC.invalidParams,
    meaning: 'A JSON-RPC method’s params are malformed; `field` names the part',
    fields: ['field'],
  },
  unknown_capability: {
    kind: 'not_found',
    rpc: RPC.invalidParams,
    meaning: 'A skill call names no skill of the agent card',
    fields: ['field'],
  },
  task_not_found: {
    kind: 'not_found',
    rpc: RPC.taskNotFound,
    meaning: 'No task with the id is kept for the member',
  },
  task_not_cancelable: {
    kind: 'conflict',
    rpc: RPC.taskNotCancelable,
    meaning: 'The task is complete and cannot be canceled',
    message: (p: { id: string; state: string }) => `Task ${p.id} is ${p.state} and cannot be canceled.`,
  },
  task_complete: {
    kind: 'conflict',
    rpc: RPC.unsupportedOperation,
    meaning: 'A message names a task, and every task is complete when it is answered',
    message: (p: { id: string }) => `Task ${p.id} is complete; send a new message without taskId.`,
    fields: ['field'],
  },
  unsupported_operation: {
    kind: 'validation',
    rpc: RPC.unsupportedOperation,
    meaning: 'A method this agent does not support (streaming, push notifications, the extended card)',
  },
  version_not_supported: {
    kind: 'validation',
    rpc: RPC.versionNotSupported,
    meaning: 'An A2A-Version this agent does not speak',
    message: (p: { version: string }) => `A2A-Version ${p.version} is not supported; send 1.0 or 0.3.`,
    fields: ['supported_versions'],
  },
} as const satisfies Record<string, ErrorEntry>;

type Catalogue = typeof ERROR_CATALOGUE;
export type ErrorCode = keyof Catalogue;
/** The codes REST answers with an HTTP status (all but the A2A-only ones). */
export type HttpErrorCode = {
  [C in ErrorCode]: Catalogue[C] extends { status: number } ? C : never;
}[ErrorCode];

type MessageParams<E> = E extends { message: (params: infer P) => string }
  ? P
  : E extends { message: string }
    ? { message?: never }
    : { message: string };
type FieldParams<E> = E extends { fields: readonly (infer F extends string)[] }
  ? { extra?: { [K in F]?: unknown } }
  : { extra?: never };
type CodeParams<E> = E extends { wireCode: (params: infer P) => string } ? P : unknown;
type StatusParams<E> = E extends { statusFromSite: true } ? { status?: number } : { status?: never };

/** What a throw site passes: the template's params, the declared extra fields, and transport facts. */
export type ErrorParams<C extends ErrorCode> = MessageParams<Catalogue[C]> &
  FieldParams<Catalogue[C]> &
  CodeParams<Catalogue[C]> &
  StatusParams<Catalogue[C]> & {
    headers?: Record<string, string>;
    rate?: RateInfo;
    retryAfterSeconds?: number;
    /** Quotas a handler counted before failing, so the RateLimit headers name the one exhausted. */
    policies?: PolicyOutcome[];
  };

type ParamsArg<C extends ErrorCode> =
  {} extends ErrorParams<C> ? [params?: ErrorParams<C>] : [params: ErrorParams<C>];

interface AnyParams {
  message?: string;
  extra?: Record<string, unknown>;
  status?: number;
  headers?: Record<string, string>;
  rate?: RateInfo;
  retryAfterSeconds?: number;
  policies?: PolicyOutcome[];
}

function entryOf(code: ErrorCode): ErrorEntry {
  return ERROR_CATALOGUE[code];
}

function messageOf(entry: ErrorEntry, params: AnyParams): string | undefined {
  if (typeof entry.message === 'function') return entry.message(params as never);
  return entry.message ?? params.message;
}

/** The failure `code` names, with its declared status, kind and message (the template filled in). */
export function apiError<C extends HttpErrorCode>(code: C, ...[params]: ParamsArg<C>): ApiError {
  const entry = entryOf(code);
  const given: AnyParams = (params as unknown as AnyParams | undefined) ?? {};
  return new ApiError(
    given.status ?? (entry.status as number),
    entry.wireCode ? entry.wireCode(given as never) : code,
    entry.kind,
    {
      message: messageOf(entry, given),
      extra: given.extra,
      authGate: entry.authGate,
      headers: given.headers,
      rate: given.rate,
      retryAfterSeconds: given.retryAfterSeconds ?? entry.retryAfterSeconds,
      policies: given.policies,
    },
  );
}

/**
 * The Error body of a code answered outside an ApiError (A2A's own errors, a batch item, the REST
 * 404): error, error_kind, the extra fields, then the message, in the order those answers had.
 */
export function errorBody<C extends ErrorCode>(code: C, ...[params]: ParamsArg<C>): Record<string, unknown> {
  const entry = entryOf(code);
  const given: AnyParams = (params as unknown as AnyParams | undefined) ?? {};
  const body: Record<string, unknown> = {
    error: entry.wireCode ? entry.wireCode(given as never) : code,
    error_kind: entry.kind,
    ...given.extra,
  };
  const message = messageOf(entry, given);
  if (message !== undefined) body.message = message;
  return body;
}

/** The HTTP status a code is answered with. */
export function statusOfCode(code: HttpErrorCode): number {
  return entryOf(code).status as number;
}

/** The error_kind a code is answered with. */
export function kindOfCode(code: ErrorCode): ErrorKind {
  return entryOf(code).kind;
}

/** The JSON-RPC code A2A answers an A2A-only code with. */
export function rpcOf(code: Exclude<ErrorCode, HttpErrorCode>): number {
  return entryOf(code).rpc as number;
}
