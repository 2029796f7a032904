import { statusOfCode } from '../core/error-catalogue.ts';
import { verifyToken } from '../domain/auth/tokens.ts';
import { bearerChallenge } from '../http/bearer-challenge.ts';
import type { Deps } from '../operations/services.ts';
import type { HttpRequestView } from './rest.ts';

/** The first protocol version whose authorization spec asks for a 403 scope challenge at runtime. */
const SCOPE_CHALLENGE_SINCE = '2025-11-25';

/**
 * How a tool call refused for a missing scope is reported. Always in-band, with HTTP 200: tool
 * errors are results (reference §5), and a 403 would reach a host without an OAuth provider as a
 * transport failure instead of a result it can read. From 2025-11-25 ("Scope Challenge Handling"),
 * when re-authorizing can cure it, that is when the member's tier grants the scope, the answer also
 * carries `WWW-Authenticate: Bearer error="insufficient_scope"` with the scopes to ask for (those the
 * token has, plus the missing one; RFC 9110 §11.6.1 allows the header on any answer). A scope above
 * the tier gets no challenge: no consent could grant it. Undefined: no challenge.
 */
export async function scopeChallengeFor(
  deps: Deps,
  request: HttpRequestView,
  result: { status: number; body: unknown },
): Promise<string | undefined> {
  const version = request.headers['mcp-protocol-version'];
  if (typeof version !== 'string' || version < SCOPE_CHALLENGE_SINCE) return undefined;
  const body = (result.body ?? {}) as { error?: unknown; required_scope?: unknown; message?: unknown };
  if (
    result.status !== statusOfCode('insufficient_scope') ||
    body.error !== 'insufficient_scope' ||
    typeof body.required_scope !== 'string'
  )
    return undefined;
  const presented = /^Bearer[ ]+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
  if (!presented) return undefined;
  const pending = verifyToken(deps.db, presented, deps.database.authCache);
  const lookup = pending instanceof Promise ? await pending : pending;
  if (!lookup.ok || !deps.tiers.grants(lookup.member.tier, body.required_scope)) return undefined;
  const scopes = [...new Set([...lookup.token.scopes, body.required_scope])].join(' ');
  return bearerChallenge(deps.config.publicUrl, 'mcp', {
    error: 'insufficient_scope',
    scope: scopes,
    description: typeof body.message === 'string' ? body.message : undefined,
  });
}
