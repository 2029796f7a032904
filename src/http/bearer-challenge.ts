/**
 * The three protected resources of the service, one per surface (RFC 9728 §3.1: a resource with a
 * path has its metadata at the well-known URL with that path appended). They are one service with
 * one token format: a token issued for any of them is good on all three, as a device-grant token is.
 */
export const RESOURCE_PATHS = { rest: '', mcp: '/api/mcp', a2a: '/api/a2a' } as const;
export type ResourceSurface = keyof typeof RESOURCE_PATHS;

export const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource';

/** The resource identifier of a surface: the URL a client calls (the root for REST). */
export function resourceOf(base: string, surface: ResourceSurface): string {
  return `${base}${RESOURCE_PATHS[surface]}`;
}

/** Every resource identifier this service answers for (an RFC 8707 `resource` must be one of them). */
export function resourcesOf(base: string): string[] {
  return (Object.keys(RESOURCE_PATHS) as ResourceSurface[]).map((surface) => resourceOf(base, surface));
}

export function protectedResourceMetadataUrl(base: string, surface: ResourceSurface): string {
  return `${base}${PROTECTED_RESOURCE_PATH}${RESOURCE_PATHS[surface]}`;
}

export interface ChallengeError {
  error: 'invalid_token' | 'insufficient_scope';
  description?: string;
  scope?: string;
}

/** Quoted-string content (RFC 9110 §5.6.4): printable ASCII, no quote or backslash. */
function quotable(text: string): string {
  return text.replace(/[^\x20-\x7e]|["\\]/g, ' ').slice(0, 200);
}

/**
 * The WWW-Authenticate challenge of a surface (RFC 6750 §3 with RFC 9728 §5.1): it points at that
 * surface's own metadata document, and names the error when a presented token was refused (a
 * request that sent no token gets no error code, RFC 6750 §3.1).
 */
export function bearerChallenge(base: string, surface: ResourceSurface, problem?: ChallengeError): string {
  const parts = [`resource_metadata="${protectedResourceMetadataUrl(base, surface)}"`];
  if (problem) {
    parts.unshift(`error="${problem.error}"`);
    if (problem.description) parts.push(`error_description="${quotable(problem.description)}"`);
    if (problem.scope) parts.push(`scope="${quotable(problem.scope)}"`);
  }
  return `Bearer ${parts.join(', ')}`;
}

/** The error codes of a 401 that mean "the token you sent is no good" rather than "send one". */
const REFUSED_TOKEN = new Set(['invalid_token', 'token_revoked', 'invalid_authorization']);

/** The challenge for a 401 answer, from its Error body (`error`, `message`). */
export function challengeForAnswer(base: string, surface: ResourceSurface, body: unknown): string {
  const { error, message } = (body ?? {}) as { error?: unknown; message?: unknown };
  if (typeof error === 'string' && REFUSED_TOKEN.has(error))
    return bearerChallenge(base, surface, {
      error: 'invalid_token',
      description: typeof message === 'string' ? message : undefined,
    });
  return bearerChallenge(base, surface);
}
