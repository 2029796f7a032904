import { ApiError, isDependencyUnavailable, toApiError } from '../core/errors.ts';
import {
  counterKey,
  counters,
  outcomeFor,
  type PolicyOutcome,
  type RatePolicy,
  rateInfo,
  rateLimitHeaders,
  windowBounds,
} from '../core/rate-limit.ts';
import type { Deps } from '../deps.ts';
import { recordActivity } from '../domain/activity/activity.ts';
import { ANONYMOUS, type Principal } from '../domain/auth/principal.ts';
import { refusalError, refusalOf } from '../operations/can-call.ts';
import { assertOutputMatches } from '../operations/output-check.ts';
import type { CallRequest, Operation, OperationContext } from '../operations/types.ts';
import { authenticate, NO_CREDENTIAL, presentsCredential, refuseCrossSiteSession } from './authenticate.ts';
import { SHORT_WINDOW_SECONDS } from './counter-stores.ts';
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  parseIdempotencyKey,
  releaseIdempotencyKey,
} from './idempotency.ts';
import { validateInput } from './validate.ts';

export interface CallResult {
  status: number;
  body: unknown;
  /** The body already serialized (UTF-8 bytes, gzipped bytes), when the handler had it cached. */
  bytes?: Buffer;
  gzipped?: () => Buffer;
  headers: Record<string, string>;
}

const defaultPolicyCache = new WeakMap<object, { anonymous: RatePolicy; token: RatePolicy }>();

/** The default policies every call is charged against (spec §8), keyed by who is calling. */
export function defaultPolicies(deps: Deps): { anonymous: RatePolicy; token: RatePolicy } {
  let policies = defaultPolicyCache.get(deps.config.limits);
  if (!policies) {
    policies = {
      anonymous: { name: 'anonymous', limit: deps.config.limits.anonymousPerMinute, window: 60, per: 'ip' },
      token: { name: 'token', limit: deps.config.limits.tokenPerMinute, window: 60, per: 'token' },
    };
    defaultPolicyCache.set(deps.config.limits, policies);
  }
  return policies;
}

function subjectOf(policy: RatePolicy, principal: Principal, ip: string): string | undefined {
  if (policy.per === 'ip') return ip;
  if (principal.kind === 'anonymous') return undefined;
  if (policy.per === 'member') return principal.member.id;
  return principal.kind === 'bearer' ? principal.token.id : undefined;
}

interface Charged {
  outcomes: PolicyOutcome[];
  exceeded?: PolicyOutcome;
}

/**
 * Counts the call against each policy. When every counter answers at once (the in-memory store of
 * the embedded engine) so does this, without a promise: the common read is charged synchronously.
 */
function charge(
  deps: Deps,
  policies: RatePolicy[],
  principal: Principal,
  ip: string,
  now: number,
): Charged | Promise<Charged> {
  const outcomes: PolicyOutcome[] = [];
  for (let i = 0; i < policies.length; i++) {
    const policy = policies[i];
    const subject = subjectOf(policy, principal, ip);
    if (subject === undefined) continue;
    const key = counterKey(policy, subject, now);
    const expiresAt = windowBounds(policy, now).end;
    const short = policy.window !== 'utc_day' && policy.window <= SHORT_WINDOW_SECONDS;
    const pending = short
      ? deps.windowCounters.hit(key, expiresAt, now)
      : counters.hit(deps.db, key, expiresAt);
    if (typeof pending !== 'number')
      return chargeRest(deps, policies.slice(i), pending, outcomes, principal, ip, now);
    outcomes.push(outcomeFor(policy, pending, now));
  }
  return { outcomes, exceeded: outcomes.find((o) => o.count > o.policy.limit) };
}

/** The rest of a charge once a counter answered with a promise (the first of `policies` is waiting). */
async function chargeRest(
  deps: Deps,
  policies: RatePolicy[],
  first: Promise<number>,
  outcomes: PolicyOutcome[],
  principal: Principal,
  ip: string,
  now: number,
): Promise<Charged> {
  outcomes.push(outcomeFor(policies[0], await first, now));
  const rest = await charge(deps, policies.slice(1), principal, ip, now);
  outcomes.push(...rest.outcomes);
  return { outcomes, exceeded: outcomes.find((o) => o.count > o.policy.limit) };
}

export function rateLimitedError(outcome: PolicyOutcome, message?: string): ApiError {
  return new ApiError(429, 'rate_limited', 'rate_limit', {
    message:
      message ??
      `Rate limit "${outcome.policy.name}" (${outcome.policy.limit} per ${
        outcome.policy.window === 'utc_day' ? 'UTC day' : `${outcome.policy.window} s`
      }) is exhausted.`,
    rate: rateInfo(outcome),
    retryAfterSeconds: outcome.resetSeconds,
    extra: {
      limit: outcome.policy.limit,
      policy: outcome.policy.name,
      violated_policies: [outcome.policy.name],
    },
  });
}

function authorize(deps: Deps, op: Operation, principal: Principal): void {
  const refusal = refusalOf(op, principal, deps.tiers);
  // A sandbox refusal is answered after validation, by the sandbox step.
  if (refusal && refusal.kind !== 'sandbox') throw refusalError(refusal, principal, deps.tiers);
}

function sandboxReceipt(op: Operation, input: unknown) {
  return {
    ok: true,
    sandbox: true,
    simulated: true,
    would_have: { action: op.id, scope: op.scope ?? null, args: input },
    note: 'Sandbox token: the request passed authorization and validation, and nothing was changed.',
  };
}

/**
 * The one request pipeline (ARCHITECTURE.md §2), shared by REST, MCP and A2A. Parsing the body is
 * the surface's job; every step after it happens here, in this order, for every operation.
 */
export async function runOperation(deps: Deps, op: Operation, request: CallRequest): Promise<CallResult> {
  const caller: { principal: Principal } = { principal: ANONYMOUS };
  const result = await runSteps(deps, op, request, caller);
  const { principal } = caller;
  if (principal.kind === 'bearer' && op.recordsActivity !== false) {
    try {
      await recordActivity(deps, {
        memberId: principal.member.id,
        operation: op.id,
        surface: request.surface,
        tokenPrefix: principal.token.prefix,
        status: result.status,
        outcome: result.status < 400 ? 'ok' : String((result.body as { error?: unknown }).error ?? 'error'),
        at: deps.clock.now(),
      });
    } catch (error) {
      // The call itself is done and answered as it went; a lost activity line is logged, not fatal.
      request.log?.error(
        { err: error, operation: op.id, requestId: request.requestId },
        'activity record failed',
      );
    }
  }
  return result;
}

async function runSteps(
  deps: Deps,
  op: Operation,
  request: CallRequest,
  caller: { principal: Principal },
): Promise<CallResult> {
  const now = deps.clock.now();
  const policies = defaultPolicies(deps);
  let rateHeaders: Record<string, string> = {};
  let charged: PolicyOutcome[] = [];
  let principal: Principal = ANONYMOUS;
  try {
    // Anonymous calls (the hot public reads) skip the lookup and the await it would cost.
    const auth = presentsCredential(request) ? await authenticate(deps, request, now) : NO_CREDENTIAL;
    principal = auth.principal;
    caller.principal = principal;
    // The session cookie rides along with any request a browser makes: writes must come from our pages.
    if (principal.kind === 'session') refuseCrossSiteSession(deps, op, request);
    const credentialRequired = op.credential === 'bearer' || op.credential === 'bearer_or_session';
    const revokedToken = op.acceptsRevokedToken ? auth.revoked : undefined;
    if (auth.problem && credentialRequired && !revokedToken) throw auth.problem;
    // Session-only operations refuse any bearer the same way, valid or not; an expired session says so.
    if (auth.problem && op.credential === 'session' && request.authorization === undefined)
      throw auth.problem;
    if (!revokedToken) authorize(deps, op, principal);

    const base = principal.kind === 'bearer' ? policies.token : policies.anonymous;
    const pendingCharge = charge(
      deps,
      op.rateLimits ? [base, ...op.rateLimits(deps)] : [base],
      principal,
      request.ip,
      now,
    );
    const { outcomes, exceeded } = pendingCharge instanceof Promise ? await pendingCharge : pendingCharge;
    charged = outcomes;
    if (!request.headersUnused) rateHeaders = rateLimitHeaders(outcomes);
    if (exceeded) throw rateLimitedError(exceeded);

    const checked = validateInput<unknown>(
      op.input,
      request.input,
      op.inputFrom === 'query',
      op.stripsControlCharacters === true,
    );
    const input = op.refineInput ? op.refineInput(checked) : checked;

    if (principal.kind === 'bearer' && principal.token.sandbox && op.sandbox !== 'real') {
      if (op.sandbox === 'denied') {
        throw new ApiError(403, 'sandbox_denied', 'sandbox', {
          message: 'Sandbox tokens cannot call this operation.',
          extra: { tier: principal.member.tier },
        });
      }
      return { status: 200, body: sandboxReceipt(op, input), headers: rateHeaders };
    }

    const key = op.idempotent ? parseIdempotencyKey(request.idempotencyKey) : undefined;
    let keyHash: string | undefined;
    if (key !== undefined) {
      const owner = principal.kind === 'anonymous' ? `ip:${request.ip}` : `member:${principal.member.id}`;
      const claim = await claimIdempotencyKey(
        deps.db,
        { principal: owner, method: op.method, path: op.path ?? `tool:${op.mcpTool}`, key },
        input,
        now,
      );
      if (claim.kind === 'replay') {
        return {
          status: claim.response.status,
          body: claim.response.body,
          headers: { ...rateHeaders, ...claim.response.headers, 'idempotent-replayed': 'true' },
        };
      }
      keyHash = claim.keyHash;
    }

    const context: OperationContext<unknown> = {
      input,
      principal,
      credentialProblem: auth.problem,
      revokedToken,
      deps,
      request,
      now,
    };
    let result: Awaited<ReturnType<Operation['handler']>>;
    try {
      result = await op.handler(context);
    } catch (error) {
      // The key is released so a retry runs the operation again. When the database is away the
      // release fails too: the claim then stays in flight until it is abandoned (60 s).
      if (keyHash) await releaseIdempotencyKey(deps.db, keyHash).catch(() => {});
      throw error;
    }
    if (deps.config.checkOutputSchemas) assertOutputMatches(op, result.body);
    const status = result.status ?? op.successStatus;
    // One RateLimit list naming the policies charged up front and the quotas the handler counted.
    // Most reads count no quota of their own and set no header: the charged headers stand as they are.
    const rated =
      result.rate?.length && !request.headersUnused
        ? rateLimitHeaders([...charged, ...result.rate])
        : rateHeaders;
    const headers = result.headers ? { ...rated, ...result.headers } : rated;
    if (keyHash) await completeOrRetry(deps, keyHash, { status, headers, body: result.body }, request.log);
    return {
      status,
      body: result.body,
      bytes: result.bytes,
      gzipped: result.gzipped,
      headers,
    };
  } catch (error) {
    const apiError = toApiError(error);
    if (apiError.status === 503) logUnavailable(request.log, error);
    else if (!(error instanceof ApiError)) {
      request.log?.error({ err: error, operation: op.id, requestId: request.requestId }, 'operation failed');
    }
    if (apiError.options.authGate && charged.length === 0) {
      // Rejections at the gate are charged to the caller's IP and carry the rate headers too (spec §8).
      try {
        const { outcomes, exceeded } = await charge(
          deps,
          [policies.anonymous],
          { kind: 'anonymous' },
          request.ip,
          now,
        );
        rateHeaders = rateLimitHeaders(outcomes);
        if (exceeded) return renderError(rateLimitedError(exceeded), request, rateHeaders);
      } catch (chargeError) {
        request.log?.error({ err: chargeError, requestId: request.requestId }, 'rate counter failed');
      }
    }
    if (apiError.options.policies) rateHeaders = rateLimitHeaders([...charged, ...apiError.options.policies]);
    return renderError(apiError, request, rateHeaders);
  }
}

export function renderError(
  error: ApiError,
  request: { requestId: string },
  rateHeaders: Record<string, string> = {},
) {
  return {
    status: error.status,
    body: error.body(request.requestId),
    headers: { ...rateHeaders, ...error.headers() },
  };
}

/**
 * Charges a request that never reached an operation (the /api/ catch-all, an unknown A2A capability,
 * an MCP exchange without a tool call) to the caller's per-IP anonymous budget; `refusal` is the 429
 * once that budget is spent.
 */
export async function chargeAnonymous(
  deps: Deps,
  ip: string,
): Promise<{ headers: Record<string, string>; refusal?: ApiError }> {
  const { outcomes, exceeded } = await charge(
    deps,
    [defaultPolicies(deps).anonymous],
    { kind: 'anonymous' },
    ip,
    deps.clock.now(),
  );
  return { headers: rateLimitHeaders(outcomes), refusal: exceeded ? rateLimitedError(exceeded) : undefined };
}

type FaultLog = {
  error(details: Record<string, unknown>, message: string): void;
  warn?: (details: Record<string, unknown>, message: string) => void;
};
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

/**
 * The operation's effect is committed, so its success is the answer even when recording it for
 * replay fails because the database went away just now: the record is retried in the background
 * (every second, for up to 5 minutes) so a retry of the same key replays it once the database is
 * back, instead of finding an abandoned claim and running the operation a second time.
 */
async function completeOrRetry(
  deps: Deps,
  keyHash: string,
  response: Parameters<typeof completeIdempotencyKey>[2],
  log: FaultLog | undefined,
): Promise<void> {
  try {
    await completeIdempotencyKey(deps.db, keyHash, response);
  } catch (error) {
    if (!isDependencyUnavailable(error)) throw error;
    let attempts = 0;
    const retry = () => {
      completeIdempotencyKey(deps.db, keyHash, response).catch((again) => {
        if (++attempts < 300 && isDependencyUnavailable(again)) setTimeout(retry, 1000).unref();
        else log?.error({ err: again }, 'idempotency record lost');
      });
    };
    setTimeout(retry, 1000).unref();
  }
}
