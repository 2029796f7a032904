import { ApiError, errors } from '../../core/errors.ts';
import { ANONYMOUS, type Principal } from '../../domain/auth/principal.ts';
import { verifySession } from '../../domain/auth/sessions.ts';
import { isTouchDue, touchToken, verifyToken } from '../../domain/auth/tokens.ts';
import { crossSiteReason, isSafeMethod } from '../../http/same-origin.ts';
import type { Deps } from '../services.ts';
import type { CallRequest, Operation } from '../types.ts';

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
 */
export async function authenticate(deps: Deps, request: CallRequest, now: number): Promise<Authentication> {
  if (request.authorization !== undefined) {
    const match = BEARER.exec(request.authorization);
    if (!match || match[1] === '') {
      return {
        principal: ANONYMOUS,
        problem: errors.unauthorized(
          'invalid_authorization',
          'Send the token as "Authorization: Bearer agt_…".',
        ),
      };
    }
    const pending = verifyToken(deps.db, match[1], deps.database.authCache);
    const lookup = pending instanceof Promise ? await pending : pending;
    if (!lookup.ok) {
      const message = {
        malformed: 'The bearer is not an agent token (agt_ followed by 43 base64url characters).',
        unknown: 'The bearer token is not recognized.',
        revoked: 'The bearer token has been revoked.',
      }[lookup.reason];
      const code = lookup.reason === 'revoked' ? 'token_revoked' : 'invalid_token';
      const revoked = lookup.reason === 'revoked' ? { id: lookup.tokenId, prefix: lookup.prefix } : undefined;
      return { principal: ANONYMOUS, problem: errors.unauthorized(code, message), revoked };
    }
    if (isTouchDue(lookup.token, now)) await touchToken(deps.db, lookup.token, now);
    return { principal: { kind: 'bearer', member: lookup.member, token: lookup.token } };
  }
  if (request.sessionId) {
    const pending = verifySession(deps.db, request.sessionId, now, deps.database.authCache);
    const session = pending instanceof Promise ? await pending : pending;
    if (session) return { principal: { kind: 'session', ...session } };
    return {
      principal: ANONYMOUS,
      problem: errors.unauthorized('session_expired', 'The browser session has expired; sign in again.'),
    };
  }
  return NO_CREDENTIAL;
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
  return new ApiError(403, 'cross_site_request', 'forbidden', {
    message: `Refused: this operation is authenticated by the browser session cookie, and the request may come from another site. ${reason} Call it from this service's own pages, or with an agent token.`,
  });
}
