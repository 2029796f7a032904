import type { IncomingHttpHeaders } from 'node:http';
import type { TSchema } from '@sinclair/typebox';
import { type HttpErrorCode, statusOfCode } from '../core/error-catalogue.ts';
import type { ApiError } from '../core/errors.ts';
import type { PolicyOutcome, RatePolicy } from '../core/rate-limit.ts';
import type { Scope } from '../domain/access/scopes.ts';
import type { Principal } from '../domain/auth/principal.ts';
import type { Deps } from './services.ts';

/**
 * Who may call an operation.
 * - public: anyone; a bearer, if sent, is read (setup-check reports on it) but never required.
 * - optional_bearer: anyone; a valid bearer attributes the call, an invalid one is treated as anonymous.
 * - bearer / session / bearer_or_session: that credential is required.
 */
export type CredentialKind = 'public' | 'optional_bearer' | 'bearer' | 'session' | 'bearer_or_session';

/** What a sandbox token gets: a simulated receipt, the real thing, or a refusal. */
export type SandboxBehaviour = 'simulated' | 'real' | 'denied';

/** The surface-neutral request every surface (REST, MCP, A2A, the pages, the CLI) hands to the pipeline. */
export interface CallRequest {
  surface: 'rest' | 'mcp' | 'a2a' | 'web' | 'cli';
  requestId: string;
  ip: string;
  userAgent?: string;
  authorization?: string;
  sessionId?: string;
  idempotencyKey?: string;
  /** The parsed JSON body or the query object, as the operation declares. */
  input: unknown;
  log?: { error(details: Record<string, unknown>, message: string): void };
  /** The operations of the app serving the call (MCP and A2A set it; `ic_capabilities` describes them). */
  operations?: readonly Operation[];
  /** The caller drops the response headers (batch items): rate headers are then not built. */
  headersUnused?: boolean;
  /**
   * The HTTP request's headers (REST): a write authenticated by the session cookie is refused when
   * they say it comes from another site (src/http/same-origin.ts).
   */
  httpHeaders?: IncomingHttpHeaders;
  /** The HTTP request as a signature covers it (reference §7); set when the request carries a bearer. */
  http?: HttpMessage;
  /**
   * The connection the call came on (its socket), where the surface has one: a key for what may be
   * remembered of that connection alone (the digest of the bearer it presented last: authenticate.ts).
   */
  connection?: object;
}

/**
 * The HTTP request that carries a call, as RFC 9421 signs it: for MCP and A2A the request with the
 * JSON-RPC envelope, for batch the outer request. One object per HTTP request, shared by every call
 * it carries (batch items, JSON-RPC batch entries), so its signature is verified, and its nonce
 * spent, once (src/operations/pipeline/signature.ts).
 */
export interface HttpMessage {
  method: string;
  /** The request target as received: path and query. */
  target: string;
  /** The body as received, when there is one (its Content-Digest is checked against these bytes). */
  body: string | undefined;
  /** The verification's outcome, kept for the other calls of the same request. */
  verdict?: Verdict;
}

/** A signature's problem, or null when it is good; a promise while its nonce's claim is written. */
export type Verdict = ApiError | null | Promise<ApiError | null>;

/**
 * Another call on behalf of the same caller (A2A dispatch, batch items). Built as one literal: a
 * spread copy would leave V8 a slow-shaped object that every pipeline step then reads.
 */
export function callWithInput(
  template: Omit<CallRequest, 'input' | 'idempotencyKey'>,
  input: unknown,
  idempotencyKey?: string,
  headersUnused = false,
): CallRequest {
  return {
    surface: template.surface,
    requestId: template.requestId,
    ip: template.ip,
    userAgent: template.userAgent,
    authorization: template.authorization,
    sessionId: template.sessionId,
    idempotencyKey,
    input,
    log: template.log,
    operations: template.operations,
    headersUnused,
    httpHeaders: template.httpHeaders,
    http: template.http,
    connection: template.connection,
  };
}

/** A caller who is a member: through a token or a browser session. */
export type SignedInPrincipal = Exclude<Principal, { kind: 'anonymous' }>;

/** The caller an operation's handler can be sure of, given the credential the operation requires. */
export type PrincipalFor<C extends CredentialKind> = C extends 'bearer'
  ? Extract<Principal, { kind: 'bearer' }>
  : C extends 'session'
    ? Extract<Principal, { kind: 'session' }>
    : C extends 'bearer_or_session'
      ? SignedInPrincipal
      : Principal;

export interface OperationContext<Input, P extends Principal = Principal> {
  input: Input;
  principal: P;
  /** Set when a bearer was presented but refused, on operations that tolerate that. */
  credentialProblem?: ApiError;
  /** The presented token when it is revoked, on operations that accept one (self-revoke is idempotent). */
  revokedToken?: { id: string; prefix: string };
  deps: Deps;
  request: CallRequest;
  now: number;
}

export interface OperationResult<Output = unknown> {
  status?: number;
  body: Output;
  /** `body` serialized as UTF-8 JSON, when the handler keeps it cached (REST sends it as it is, batch items embed it). */
  bytes?: Buffer;
  /** The same JSON as text, for a small answer (REST sends it so: see serialize in http/serialized-answers.ts). */
  text?: string;
  /** Those bytes gzipped, made once (REST sends them to a client that accepts gzip). */
  gzipped?: () => Buffer;
  headers?: Record<string, string>;
  /** Quota policies the handler charged itself (counted only when a side effect really happened). */
  rate?: PolicyOutcome[];
}

export interface DocumentedError {
  status: number;
  description: string;
  /** Headers this answer carries (name → what it holds), for OpenAPI (the x402 402's PAYMENT-REQUIRED). */
  headers?: Record<string, string>;
  /** The codes answered with this status, when the declaration names them (`refusedWith`). */
  codes?: readonly HttpErrorCode[];
}

/**
 * A documented refusal named by its codes: the status is theirs, as the error catalogue declares
 * it (codes of different statuses are a mistake, refused at load).
 */
export function refusedWith(
  codes: readonly [HttpErrorCode, ...HttpErrorCode[]],
  description: string,
): DocumentedError {
  const status = statusOfCode(codes[0]);
  const other = codes.find((code) => statusOfCode(code) !== status);
  if (other) throw new Error(`${other} is not answered ${status}, as ${codes[0]} is`);
  return { status, description, codes };
}

export interface Operation<Input = any, Output = any, C extends CredentialKind = CredentialKind> {
  id: string;
  /** The HTTP method of the REST route; POST (the transport's) for an MCP/A2A-only operation. */
  method: 'GET' | 'POST' | 'DELETE';
  /**
   * The REST path; absent when the operation exists only as an MCP tool and A2A capability
   * (reference §1, §5: e.g. ic_health, ic_capabilities, ic_events_next). Such an operation needs an `mcpTool`.
   */
  path?: string;
  /** Other paths that serve the same operation (vendor names kept for wire compatibility). */
  aliases?: string[];
  tag: string;
  summary: string;
  description?: string;
  /** The MCP tool (and A2A capability) name; absent when the operation is REST-only. */
  mcpTool?: string;
  credential: C;
  /** Let a revoked bearer through to the handler (only self-revoke, which is idempotent). */
  acceptsRevokedToken?: boolean;
  scope?: Scope;
  sandbox: SandboxBehaviour;
  /** Accepts Idempotency-Key. */
  idempotent: boolean;
  /**
   * Input fields an agent (bearer) caller must send though a browser session may leave them out: the
   * handler enforces it; OpenAPI and the MCP tool's inputSchema, written for agents, list them as required.
   */
  agentRequired?: readonly string[];
  /**
   * What a call does, for the MCP tool annotations, the A2A skills and OpenAPI (operations/effects.ts).
   * Absent, it is derived: a GET, or an MCP-only operation a sandbox token runs for real, reads; any
   * other call adds. Declared where that is wrong: a revocation or a decision overwrites
   * (destructive), a POST that only asks (research) reads.
   */
  effect?: 'read' | 'additive' | 'destructive';
  /** A write that has no further effect when repeated with the same input (reads always have none). */
  repeatable?: true;
  /** The call may reach beyond this service (a language-model provider, the code host). */
  openWorld?: true;
  /** A public GET that POST /api/batch may run (reference §1 allow-list). */
  batchable?: true;
  /** false: calls are left out of the member's activity log (diagnostics, and reading that log). */
  recordsActivity?: false;
  /**
   * What a call touched, for its row in the member's activity log (`event:<url>`, `booking:<id>`,
   * `highlight:<id>`), from its input, or from its answer's body once there is one (`body` is
   * undefined while the row is written inside the operation's transaction).
   */
  touches?: (input: any, body: any) => string | undefined;
  /**
   * false: the answer is given once and no copy is kept after the call (an A2A task keeps its state,
   * not its artifact), because it carries what the caller asked (research echoes the question).
   */
  keepsResult?: false;
  /** Counted before the handler runs, on every call that passes authentication. */
  rateLimits?: (deps: Deps) => RatePolicy[];
  /** Quotas the handler counts itself, listed so documents can describe them. */
  quotas?: (deps: Deps) => RatePolicy[];
  /**
   * The handler strips control characters from its text itself (feedback, as the reference does):
   * a NUL in a string is removed at validation instead of refused. Property names with a NUL are
   * still refused, and every other operation refuses a NUL anywhere.
   */
  stripsControlCharacters?: true;
  /** Largest accepted body in bytes (413 above it). */
  bodyLimit?: number;
  inputFrom: 'body' | 'query';
  input: TSchema;
  /**
   * Checks the schema cannot express (e.g. a body in either of two shapes) and returns the input the
   * handler receives; throws an ApiError. Runs in the validation step, so sandbox calls get it too.
   */
  refineInput?: (input: any) => Input;
  output: TSchema;
  successStatus: number;
  errors: DocumentedError[];
  /** Protocol headers beyond ours (name → what it holds), for OpenAPI: x402's PAYMENT-SIGNATURE and PAYMENT-RESPONSE. */
  headers?: { request?: Record<string, string>; success?: Record<string, string> };
  deprecated?: { since: string; sunset: string; link?: string };
  /**
   * The pipeline has authenticated the credential `credential` names: the principal is narrowed to it.
   * A handler that answers from memory may return its result itself rather than a promise: the
   * pipeline then answers without a turn of the microtask queue (run.ts, `runOperationNow`).
   */
  handler(
    ctx: OperationContext<Input, PrincipalFor<C>>,
  ): OperationResult<Output> | Promise<OperationResult<Output>>;
}

/** An operation served on REST (it has a path). */
export type RestOperation<Input = any, Output = any> = Operation<Input, Output> & { path: string };

export function isRestOperation(op: Operation): op is RestOperation {
  return op.path !== undefined;
}

/** Identity function that keeps the handler's input type tied to its schema. */
// One signature per required credential, so a handler's principal is narrowed even when the call
// names Input and Output explicitly (TypeScript infers no type argument once some are given).
export function defineOperation<Input, Output>(
  // A revoked bearer reaches its handler as no principal at all, so that operation is not narrowed.
  op: Operation<Input, Output, 'bearer'> & { acceptsRevokedToken?: false },
): Operation<Input, Output, 'bearer'>;
export function defineOperation<Input, Output>(
  op: Operation<Input, Output, 'session'>,
): Operation<Input, Output, 'session'>;
export function defineOperation<Input, Output>(
  op: Operation<Input, Output, 'bearer_or_session'>,
): Operation<Input, Output, 'bearer_or_session'>;
export function defineOperation<Input, Output>(op: Operation<Input, Output>): Operation<Input, Output>;
export function defineOperation(op: Operation): Operation {
  return op;
}
