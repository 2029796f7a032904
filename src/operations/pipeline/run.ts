import { ApiError, toApiError } from '../../core/errors.ts';
import { type PolicyOutcome, rateLimitHeaders } from '../../core/rate-limit.ts';
import {
  correctActivity,
  insertActivity,
  newActivityId,
  recordActivity,
} from '../../domain/activity/activity.ts';
import { ANONYMOUS, type Principal } from '../../domain/auth/principal.ts';
import { type CommitHook, withCommitHook } from '../../storage/transactions.ts';
import { refusalError, refusalOf } from '../can-call.ts';
import { assertOutputMatches } from '../output-check.ts';
import type { Deps } from '../services.ts';
import type { CallRequest, Operation, OperationContext, OperationResult } from '../types.ts';
import { type CallResult, logUnavailable, renderError } from './answer.ts';
import {
  type Authentication,
  authenticate,
  NO_CREDENTIAL,
  presentsCredential,
  refuseCrossSiteSession,
} from './authenticate.ts';
import { charge, defaultPolicies, rateLimitedError } from './charge.ts';
import {
  claimIdempotencyKey,
  completeOrRetry,
  type FaultLog,
  markIdempotencyApplied,
  parseIdempotencyKey,
  releaseIdempotencyKey,
} from './idempotency.ts';
import { recordCallMetrics } from './metrics.ts';
import { isSandboxCall, sandboxReceipt } from './sandbox.ts';
import { verifySignature, withVerdict } from './signature.ts';
import { validateInput } from './validate.ts';

export type { CallResult } from './answer.ts';

/**
 * The one request pipeline (ARCHITECTURE.md §2), shared by REST, batch, MCP, A2A and the pages.
 * Parsing the body is the surface's job; every step after it happens here, in this order, for
 * every operation:
 *
 *  1. authenticateCaller   the credential is read once: a principal, or why it was refused
 *     verifySignature      a token with a bound key: the request's RFC 9421 signature (signature.ts)
 *  2. refuseCrossSite      a write a session cookie authenticates must come from our own pages
 *  3. admit                the operation's credential, scope, tier (can-call.ts decides)
 *  4. chargeLimits         the default rate limit and the operation's own, with their headers (not the CLI)
 *  5. validate             the input against the operation's schema, then its own refinement
 *  6. sandboxStep          a sandbox token's write is rehearsed (rolled back) and answered with a receipt
 *  7. claimKey             an Idempotency-Key is claimed, or its stored answer replayed
 *  8. handle               the handler; the activity row is written inside its transaction
 *  9. checkOutput          the body against the output schema (CHECK_OUTPUT_SCHEMAS)
 * 10. completeKey          the answer is kept for replay under the Idempotency-Key
 * 11. recordCall           the member's activity row, when step 8 did not write it
 *
 * A failure at any step is answered by `answerFailure` in the spec's Error shape.
 */
export function runOperation(deps: Deps, op: Operation, request: CallRequest): Promise<CallResult> {
  // Not an async function: returning the pipeline's own promise from one would cost two more turns.
  const outcome = runOperationNow(deps, op, request);
  return outcome instanceof Promise ? outcome : Promise.resolve(outcome);
}

/**
 * `runOperation` for a route that can send an answer at once (REST): the result itself when
 * every step answered without waiting (a cached credential, counters and handler that answer from
 * memory: the common read), else its promise. Each await a step did not need cost a promise and a
 * turn of the microtask queue, a measurable share of a cached read (docs/benchmarks.md).
 */
export function runOperationNow(
  deps: Deps,
  op: Operation,
  request: CallRequest,
): CallResult | Promise<CallResult> {
  const started = performance.now();
  const call = new Call(deps, op, request);
  let steps: CallResult | Promise<CallResult>;
  try {
    steps = runSteps(call);
  } catch (error) {
    return answerFailure(call, error).then((result) => finish(call, result, started));
  }
  if (steps instanceof Promise)
    return steps.then(
      (result) => finish(call, result, started),
      (error) => answerFailure(call, error).then((result) => finish(call, result, started)),
    );
  return finish(call, steps, started);
}

/**
 * Steps 1 to 3 alone, as runOperation runs them: the credential, its signature verdict, the
 * cross-site check and the operation's admission (credential, scope, tier). For an answer that
 * stays open after its call (an MCP subscription streaming what `op` reads), asked again whenever
 * the credential may have changed: nothing is charged, validated, handled or recorded, and the
 * signature verdict is one per HTTP request, so asking again claims no nonce twice. The principal,
 * or the refusal answered as runOperation answers it.
 */
export async function admitOnly(
  deps: Deps,
  op: Operation,
  request: CallRequest,
): Promise<{ principal: Principal } | { refusal: CallResult }> {
  const call = new Call(deps, op, request);
  try {
    if (presentsCredential(request)) {
      const authenticating = authenticate(deps, request, call.now);
      const auth = authenticating instanceof Promise ? await authenticating : authenticating;
      call.auth = auth;
      const signing = verifySignature(deps, request, auth, call.now);
      if (signing instanceof Promise) call.auth = withVerdict(auth, await signing);
      else if (signing) call.auth = signing;
      call.principal = call.auth.principal;
    }
    refuseCrossSite(call);
    admit(call);
    return { principal: call.principal };
  } catch (error) {
    return { refusal: await answerFailure(call, error) };
  }
}

/** The call's metrics, and its activity row when it gets one (the only step after the answer). */
function finish(call: Call, result: CallResult, started: number): CallResult | Promise<CallResult> {
  recordCallMetrics(call.op, call.request, result, started);
  if (call.activity) return recordCall(call, call.activity, result).then(() => result);
  return result;
}

// The steps in order. Each step that may wait returns a promise only when it does, and the steps
// after it run as its continuation; a synchronous throw and a rejection are answered alike.
function runSteps(call: Call): CallResult | Promise<CallResult> {
  if (presentsCredential(call.request)) {
    const authenticating = authenticateCaller(call);
    if (authenticating) return authenticating;
  }
  return afterAuthentication(call);
}

function afterAuthentication(call: Call): CallResult | Promise<CallResult> {
  refuseCrossSite(call);
  admit(call);
  const charging = chargeLimits(call);
  if (charging) return charging.then(() => afterCharge(call));
  return afterCharge(call);
}

function afterCharge(call: Call): CallResult | Promise<CallResult> {
  validate(call);
  if (isSandboxCall(call.op, call.principal)) return sandboxStep(call);
  if (call.op.idempotent && call.request.idempotencyKey !== undefined) return keyedSteps(call);
  const handled = handle(call);
  if (handled instanceof Promise) return handled.then((result) => answerOf(call, result));
  return answerOf(call, handled);
}

/** The steps of a call with an Idempotency-Key: claimed (or its stored answer replayed), then kept. */
async function keyedSteps(call: Call): Promise<CallResult> {
  const replay = await claimKey(call);
  if (replay) return replay;
  const answer = answerOf(call, await handle(call));
  if (call.keyHash) await completeKey(call, answer);
  return answer;
}

function answerOf(call: Call, result: OperationResult): CallResult {
  checkOutput(call, result);
  return shape(call, result);
}

/** One call as it moves through the steps. */
class Call {
  readonly deps: Deps;
  readonly op: Operation;
  readonly request: CallRequest;
  readonly now: number;
  auth: Authentication = NO_CREDENTIAL;
  principal: Principal = ANONYMOUS;
  revokedToken: Authentication['revoked'];
  charged: PolicyOutcome[] = [];
  rateHeaders: Record<string, string> = {};
  input: unknown;
  keyHash: string | undefined;
  /** Answered by the sandbox step: the activity row says so. */
  sandboxed = false;
  /** The member's activity row for this call, when it gets one (a bearer call of an operation that records). */
  activity: ActivityEntry | undefined;

  constructor(deps: Deps, op: Operation, request: CallRequest) {
    this.deps = deps;
    this.op = op;
    this.request = request;
    this.now = deps.clock.now();
  }
}

interface ActivityEntry {
  id: string;
  /** Set when the row was written inside the operation's transaction, with the answer it assumed. */
  written?: { status: number; outcome: string };
}

/**
 * Undefined when the credential and its signature were settled at once (a cached lookup, a verdict
 * with no nonce to write), else the promise of the steps from there on.
 */
function authenticateCaller(call: Call): Promise<CallResult> | undefined {
  const authenticating = authenticate(call.deps, call.request, call.now);
  if (authenticating instanceof Promise)
    return authenticating.then((auth) => authenticated(call, auth) ?? afterAuthentication(call));
  return authenticated(call, authenticating);
}

function authenticated(call: Call, auth: Authentication): Promise<CallResult> | undefined {
  call.auth = auth;
  const signing = verifySignature(call.deps, call.request, auth, call.now);
  if (signing instanceof Promise)
    return signing.then((problem) => {
      call.auth = withVerdict(auth, problem);
      settlePrincipal(call);
      return afterAuthentication(call);
    });
  if (signing) call.auth = signing;
  settlePrincipal(call);
  return undefined;
}

function settlePrincipal(call: Call): void {
  call.principal = call.auth.principal;
  const { principal, op } = call;
  if (principal.kind === 'bearer' && op.recordsActivity !== false)
    call.activity = { id: newActivityId(call.now) };
}

function refuseCrossSite(call: Call): void {
  // The session cookie rides along with any request a browser makes: writes must come from our pages.
  if (call.principal.kind === 'session') refuseCrossSiteSession(call.deps, call.op, call.request);
}

function admit(call: Call): void {
  const { auth, op, principal, deps } = call;
  const credentialRequired = op.credential === 'bearer' || op.credential === 'bearer_or_session';
  call.revokedToken = op.acceptsRevokedToken ? auth.revoked : undefined;
  if (auth.problem && credentialRequired && !call.revokedToken) throw auth.problem;
  // Session-only operations refuse any bearer the same way, valid or not; an expired session says so.
  if (auth.problem && op.credential === 'session' && call.request.authorization === undefined)
    throw auth.problem;
  if (call.revokedToken) return;
  const refusal = refusalOf(op, principal, deps.tiers);
  // A sandbox refusal is answered after validation, by the sandbox step.
  if (refusal && refusal.kind !== 'sandbox') throw refusalError(refusal, principal, deps.tiers);
}

/** Synchronous when every counter answers at once (the embedded engine's hot reads); else a promise. */
function chargeLimits(call: Call): Promise<void> | undefined {
  const { deps, op, principal, request } = call;
  // The command line runs with the database's own credentials: a limit there protects nothing.
  if (request.surface === 'cli') return undefined;
  const policies = defaultPolicies(deps);
  const base = principal.kind === 'bearer' ? policies.token : policies.anonymous;
  const pending = charge(
    deps,
    op.rateLimits ? [base, ...op.rateLimits(deps)] : [base],
    principal,
    request.ip,
    call.now,
  );
  if (!(pending instanceof Promise)) return settleCharge(call, pending);
  return pending.then((charged) => settleCharge(call, charged));
}

function settleCharge(call: Call, { outcomes, exceeded }: Awaited<ReturnType<typeof charge>>): undefined {
  call.charged = outcomes;
  if (!call.request.headersUnused) call.rateHeaders = rateLimitHeaders(outcomes);
  if (exceeded) throw rateLimitedError(exceeded);
  return undefined;
}

function validate(call: Call): void {
  const { op } = call;
  const checked = validateInput<unknown>(
    op.input,
    call.request.input,
    op.inputFrom === 'query',
    op.stripsControlCharacters === true,
  );
  call.input = op.refineInput ? op.refineInput(checked) : checked;
}

/** A sandbox token's write: checked as the live call would be, answered with a receipt, nothing kept. */
async function sandboxStep(call: Call): Promise<CallResult> {
  // The rehearsal's unit commits its activity row once its effects are rolled back.
  const hook = commitHook(call, { status: 200, outcome: 'sandbox' });
  const body = await withCommitHook(hook, () => sandboxReceipt(call.op, contextOf(call)), laneOf(call));
  call.sandboxed = true;
  return { status: 200, body, headers: call.rateHeaders };
}

async function claimKey(call: Call): Promise<CallResult | undefined> {
  const { op, principal, request } = call;
  const key = op.idempotent ? parseIdempotencyKey(request.idempotencyKey) : undefined;
  if (key === undefined) return undefined;
  const owner = principal.kind === 'anonymous' ? `ip:${request.ip}` : `member:${principal.member.id}`;
  const claim = await claimIdempotencyKey(
    call.deps.db,
    { principal: owner, method: op.method, path: op.path ?? `tool:${op.mcpTool}`, key },
    call.input,
    call.now,
  );
  if (claim.kind === 'owner') {
    call.keyHash = claim.keyHash;
    return undefined;
  }
  return {
    status: claim.response.status,
    body: claim.response.body,
    headers: { ...call.rateHeaders, ...claim.response.headers, 'idempotent-replayed': 'true' },
  };
}

function contextOf(call: Call): OperationContext<unknown> {
  return {
    input: call.input,
    principal: call.principal,
    credentialProblem: call.auth.problem,
    revokedToken: call.revokedToken,
    deps: call.deps,
    request: call.request,
    now: call.now,
  };
}

function handle(call: Call): OperationResult | Promise<OperationResult> {
  // Nothing to record in a transaction and no key to release: the handler's own answer.
  if (!call.activity && !call.keyHash) return call.op.handler(contextOf(call));
  return handleRecorded(call);
}

async function handleRecorded(call: Call): Promise<OperationResult> {
  const { op, deps } = call;
  const context = contextOf(call);
  try {
    return await withCommitHook(
      commitHook(call, { status: op.successStatus, outcome: 'ok' }),
      async () => op.handler(context),
      laneOf(call),
    );
  } catch (error) {
    // The key is released so a retry runs the operation again (unless the operation's transaction
    // had committed: see releaseIdempotencyKey). When the database is away the release fails too:
    // the claim then stays in flight until it is abandoned (60 s).
    const refusal = error instanceof ApiError && error.status < 500;
    if (call.keyHash) await releaseIdempotencyKey(deps.db, call.keyHash, refusal).catch(() => {});
    throw error;
  }
}

/** The write batcher's lane of a call's transactions: the member it acts for (see WriteBatcher). */
function laneOf(call: Call): string | undefined {
  const { principal } = call;
  return principal.kind === 'anonymous' ? undefined : `member:${principal.member.id}`;
}

/**
 * Written in the operation's first transaction, so they commit with its effect: the activity row
 * (assuming the call is answered as `assumed`) and the Idempotency-Key's `applied` state.
 */
function commitHook(call: Call, assumed: { status: number; outcome: string }): CommitHook {
  const { activity, keyHash } = call;
  return {
    used: false,
    run: async (trx) => {
      if (activity) {
        await insertActivity(trx, activity.id, activityRecord(call, assumed));
        activity.written = assumed;
      }
      if (keyHash) await markIdempotencyApplied(trx, keyHash);
    },
    // The row went with a transaction that did not commit: the call's outcome is recorded on its own.
    rolledBack: () => {
      if (activity) activity.written = undefined;
    },
  };
}

function checkOutput(call: Call, result: OperationResult): void {
  if (call.deps.config.checkOutputSchemas) assertOutputMatches(call.op, result.body);
}

/** The answer's status and headers: one RateLimit list naming the policies charged and the quotas counted. */
function shape(call: Call, result: OperationResult): CallResult {
  // Most reads count no quota of their own and set no header: the charged headers stand as they are.
  const rated =
    result.rate?.length && !call.request.headersUnused
      ? rateLimitHeaders([...call.charged, ...result.rate])
      : call.rateHeaders;
  return {
    status: result.status ?? call.op.successStatus,
    body: result.body,
    bytes: result.bytes,
    text: result.text,
    gzipped: result.gzipped,
    headers: result.headers ? { ...rated, ...result.headers } : rated,
  };
}

async function completeKey(call: Call, answer: CallResult): Promise<void> {
  if (!call.keyHash) return;
  const stored = { status: answer.status, headers: answer.headers, body: answer.body };
  await completeOrRetry(call.deps.db, call.keyHash, stored, call.request.log);
}

async function answerFailure(call: Call, error: unknown): Promise<CallResult> {
  const { deps, request, op } = call;
  const apiError = toApiError(error);
  if (apiError.status === 503) logUnavailable(request.log, error);
  else if (apiError.status >= 500) {
    request.log?.error({ err: error, operation: op.id, requestId: request.requestId }, 'operation failed');
  } else if (!(error instanceof ApiError)) {
    // Bad input the edge let through (the database refused its text): answered 400, and noted so
    // the check that missed it can be added.
    const log = request.log as FaultLog | undefined;
    const details = {
      operation: op.id,
      requestId: request.requestId,
      code: (error as { code?: unknown }).code,
    };
    log?.warn?.(details, 'input refused by the database: answering 400');
  }
  let rateHeaders = call.rateHeaders;
  if (apiError.options.authGate && call.charged.length === 0) {
    // Rejections at the gate are charged to the caller's IP and carry the rate headers too (spec §8).
    try {
      const { outcomes, exceeded } = await charge(
        deps,
        [defaultPolicies(deps).anonymous],
        ANONYMOUS,
        request.ip,
        call.now,
      );
      rateHeaders = rateLimitHeaders(outcomes);
      if (exceeded) return renderError(rateLimitedError(exceeded), request, rateHeaders);
    } catch (chargeError) {
      request.log?.error({ err: chargeError, requestId: request.requestId }, 'rate counter failed');
    }
  }
  if (apiError.options.policies)
    rateHeaders = rateLimitHeaders([...call.charged, ...apiError.options.policies]);
  return renderError(apiError, request, rateHeaders);
}

/** What the call touched, from its input and (once answered) its body; a throwing reader names nothing. */
function targetOf(call: Call, body: unknown): string | undefined {
  const { touches } = call.op;
  if (!touches || call.input === undefined) return undefined;
  try {
    return touches(call.input, body);
  } catch {
    return undefined;
  }
}

function activityRecord(call: Call, answer: { status: number; outcome: string }, body?: unknown) {
  const principal = call.principal as Extract<Principal, { kind: 'bearer' }>;
  return {
    target: targetOf(call, body),
    memberId: principal.member.id,
    operation: call.op.id,
    surface: call.request.surface,
    tokenPrefix: principal.token.prefix,
    status: answer.status,
    outcome: answer.outcome,
    at: call.now,
  };
}

/** The activity row, written on its own unless the operation's transaction carried it as answered. */
async function recordCall(call: Call, entry: ActivityEntry, result: CallResult): Promise<void> {
  const outcome = call.sandboxed
    ? 'sandbox'
    : result.status < 400
      ? 'ok'
      : String((result.body as { error?: unknown }).error ?? 'error');
  const answered = { status: result.status, outcome };
  try {
    if (!entry.written) await recordActivity(call.deps, activityRecord(call, answered, result.body));
    else {
      // A target only the answer names (a new booking's id) is added to the row the transaction wrote.
      const target = call.op.touches && result.status < 400 ? targetOf(call, result.body) : undefined;
      const named = target !== undefined && target !== targetOf(call, undefined);
      if (named || entry.written.status !== answered.status || entry.written.outcome !== outcome)
        await correctActivity(call.deps, entry.id, named ? { ...answered, target } : answered, {
          ...activityRecord(call, entry.written),
        });
    }
  } catch (error) {
    // The call itself is done and answered as it went; a lost activity line is logged, not fatal.
    call.request.log?.error(
      { err: error, operation: call.op.id, requestId: call.request.requestId },
      'activity record failed',
    );
  }
}
