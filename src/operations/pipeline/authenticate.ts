import { type ApiError, apiError } from '../../core/errors.ts';
import { ANONYMOUS, type Principal } from '../../domain/auth/principal.ts';
import { sessionDigest, verifySessionDigest } from '../../domain/auth/sessions.ts';
import {
  isTouchDue,
  presentedTokenDigest,
  type TokenLookup,
  touchToken,
  verifyTokenDigest,
} from '../../domain/auth/tokens.ts';
import { crossSiteReason, isSafeMethod } from '../../http/same-origin.ts';
import type { Deps } from '../services.ts';
import type { CallRequest, Operation } from '../types.ts';
import { rememberDigest, rememberedDigest } from './connection-credentials.ts';

export type Authentication = {
  principal: Principal;
  problem?: ApiError;
  revoked?: { id: string; prefix: string };
};

const BEARER = /^Bearer[ ]+(\S*)\s*$/i;

/** A call that presents no credential: anonymous, with nothing to look up. */
export const NO_CREDENTIAL: Readonly<Authentication> = Object.freeze({ principal: ANONYMOUS });

export function presentsCredential(request: CallRequest): boolean {
  return request.authorization !== undefined || Boolean(request.sessionId);
}

/**
 * Reads the credential once and passes the principal down; nothing later verifies it again.
 * A presented but refused bearer is reported as `problem`, and the operation decides what it means.
 * Answered at once when the lookup is (a cached token or session), else as a promise.
 */
export function authenticate(
  deps: Deps,
  request: CallRequest,
  now: number,
): Authentication | Promise<Authentication> {
  if (request.authorization !== undefined) {
    const digest = bearerDigest(request.authorization, request.connection);
    if (typeof digest !== 'string') return digest;
    const pending = verifyTokenDigest(deps.db, digest, deps.database.authCache);
    if (pending instanceof Promise) return pending.then((lookup) => bearerOf(deps, lookup, now));
    return bearerOf(deps, pending, now);
  }
  if (request.sessionId) {
    const digest = sessionIdDigest(request.sessionId, request.connection);
    if (digest === undefined) return sessionOf(undefined);
    const pending = verifySessionDigest(deps.db, digest, now, deps.database.authCache);
    if (pending instanceof Promise) return pending.then(sessionOf);
    return sessionOf(pending);
  }
  return NO_CREDENTIAL;
}

/** The digest of the presented token, or the refusal of a header that does not carry one. */
function bearerDigest(authorization: string, connection: object | undefined): string | Authentication {
  const known = rememberedDigest(connection, 'bearer', authorization);
  if (known !== undefined) return known;
  const match = BEARER.exec(authorization);
  if (!match || match[1] === '')
    return {
      principal: ANONYMOUS,
      problem: apiError('invalid_authorization'),
    };
  const digest = presentedTokenDigest(match[1]);
  if (digest === undefined) return refusedBearer('malformed');
  rememberDigest(connection, 'bearer', authorization, digest);
  return digest;
}

/** The digest of the presented session id; undefined when it cannot be one. */
function sessionIdDigest(sessionId: string, connection: object | undefined): string | undefined {
  const known = rememberedDigest(connection, 'session', sessionId);
  if (known !== undefined) return known;
  const digest = sessionDigest(sessionId);
  if (digest !== undefined) rememberDigest(connection, 'session', sessionId, digest);
  return digest;
}

function bearerOf(deps: Deps, lookup: TokenLookup, now: number): Authentication | Promise<Authentication> {
  if (!lookup.ok)
    return refusedBearer(
      lookup.reason,
      lookup.reason === 'revoked' ? { id: lookup.tokenId, prefix: lookup.prefix } : undefined,
    );
  const principal: Principal = { kind: 'bearer', member: lookup.member, token: lookup.token };
  if (isTouchDue(lookup.token, now)) return touchToken(deps, lookup.token, now).then(() => ({ principal }));
  return { principal };
}

function refusedBearer(
  reason: Extract<TokenLookup, { ok: false }>['reason'],
  revoked?: Authentication['revoked'],
): Authentication {
  const problem =
    reason === 'revoked'
      ? apiError('token_revoked')
      : apiError('invalid_token', {
          message:
            reason === 'malformed'
              ? 'The bearer is not an agent token (agt_ followed by 43 base64url characters).'
              : 'The bearer token is not recognized.',
        });
  return { principal: ANONYMOUS, problem, revoked };
}

function sessionOf(session: Awaited<ReturnType<typeof verifySessionDigest>>): Authentication {
  if (session) return { principal: { kind: 'session', ...session } };
  return {
    principal: ANONYMOUS,
    problem: apiError('session_expired'),
  };
}

/**
 * A browser sends the session cookie with whatever request a page makes, including one another
 * site's page makes; only SameSite=Lax would stand in the way. So a state-changing operation that
 * the session cookie authenticates must come from this service's own pages: refused (403
 * cross_site_request) when Sec-Fetch-Site says cross-site or Origin names another origin. (A body
 * must be application/json: what a page of another site can send without a preflight, text/plain,
 * a form, multipart or a body with no type, has no parser on the API and is a 415 before any
 * operation runs.) Bearer calls carry no ambient credential and are not checked.
 */
export function refuseCrossSiteSession(deps: Deps, op: Operation, request: CallRequest): void {
  if (isSafeMethod(op.method)) return;
  const reason = crossSiteReason(request.httpHeaders ?? {}, deps.config.publicUrl);
  if (reason) throw crossSiteRequest(reason);
}

function crossSiteRequest(reason: string): ApiError {
  return apiError('cross_site_request', { reason });
}
