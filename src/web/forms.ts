import { stringifySetCookie } from 'cookie';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import { SESSION_COOKIE, sessionDigest } from '../domain/auth/sessions.ts';
import { readCookie } from '../http/client.ts';
import { crossSiteReason, isSafeMethod } from '../http/same-origin.ts';
import { constantTimeEqual, deriveFromSecret, randomId } from '../secrets.ts';
import { html, page, type SafeHtml } from './html.ts';

export const CSRF_COOKIE = '__csrf';
const FORM_BODY_LIMIT = 16 * 1024;

/**
 * HTML forms post urlencoded bodies; only the page scope parses them, the API keeps answering 415.
 * A state-changing request to a form scope that a browser says comes from another site is refused
 * before its body is read (403 page), whatever its CSRF field: the forms are posted from our pages.
 */
export function acceptFormBodies(scope: FastifyInstance, config: Config): void {
  scope.addHook('onRequest', (request, reply, done) => {
    if (isSafeMethod(request.method)) return done();
    const reason = crossSiteReason(request.headers, config.publicUrl);
    if (!reason) return done();
    reply
      .code(403)
      .header('cache-control', 'no-store')
      .type('text/html; charset=utf-8')
      .send(
        page(
          'Cross-site form refused',
          html`<h1>This form came from another site</h1><p>${reason} Forms here are only accepted from this service's own pages: open the page here and submit it again.</p>`,
        ),
      );
  });
  scope.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT },
    (_request, body, done) => done(null, parseForm(body as string)),
  );
}

/** A field sent once is a string; one sent several times (checkboxes) is a list. */
function parseForm(body: string): Record<string, string | string[]> {
  const fields: Record<string, string | string[]> = Object.create(null);
  for (const [name, value] of new URLSearchParams(body)) {
    const seen = fields[name];
    fields[name] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
  }
  return fields;
}

export function formList(request: FastifyRequest, name: string): string[] {
  const body = request.body as Record<string, unknown> | undefined;
  const value = body && typeof body === 'object' ? body[name] : undefined;
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

export function formField(request: FastifyRequest, name: string): string | undefined {
  const body = request.body as Record<string, unknown> | undefined;
  const value = body && typeof body === 'object' ? body[name] : undefined;
  return typeof value === 'string' ? value : undefined;
}

const NEXT_FALLBACK = '/signin';
/** Where a sign-in with no `next` lands: the member's agents and what they did. */
const SIGNED_IN_LANDING = '/my-agents';
const NEXT_MAX = 2000;
const NEXT_BASE = 'http://next.invalid';

/**
 * Where to go after signing in: only a path on this site (never `//host`, `/\host` or a full URL),
 * as the URL parser a browser uses reads it, written back in its ASCII form (anything else
 * percent-encoded) so that it is always a valid `Location` header. Anything else is `/signin`.
 */
export function safeNext(raw: unknown): string {
  if (typeof raw !== 'string' || raw.length > NEXT_MAX || !raw.startsWith('/')) return NEXT_FALLBACK;
  const url = URL.parse(raw, NEXT_BASE);
  if (!url || url.origin !== NEXT_BASE) return NEXT_FALLBACK;
  const path = url.pathname + url.search + url.hash;
  // `/.//host` resolves to the path `//host`, which a browser would read as another host.
  return path.length <= NEXT_MAX && !/^\/[/\\]/.test(path) ? path : NEXT_FALLBACK;
}

/**
 * A Set-Cookie value for one of the site's cookies: HttpOnly, SameSite=Lax, Secure when the public
 * URL is https, scoped to `path` (default `/`), with Max-Age when given (0 deletes the cookie).
 */
export function setCookie(
  config: Config,
  name: string,
  value: string,
  options: { maxAgeSeconds?: number; path?: string } = {},
): string {
  return stringifySetCookie({
    name,
    value,
    path: options.path ?? '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: config.publicUrl.startsWith('https:'),
    maxAge: options.maxAgeSeconds,
  });
}

const CSRF_PURPOSE = 'form csrf token';
const PRE_SESSION_SECRET = /^csrf_[A-Za-z0-9_-]{20,100}$/;

/**
 * The secret this browser's form tokens are derived from: its session cookie once signed in, before
 * that a random pre-session secret in the HttpOnly `__csrf` cookie. Both live only in HttpOnly
 * cookies of this browser, so no other browser or site can compute a token for it.
 */
function browserSecretOf(request: FastifyRequest): string | undefined {
  const session = readCookie(request.headers.cookie, SESSION_COOKIE);
  if (session && sessionDigest(session) !== undefined) return session;
  const preSession = readCookie(request.headers.cookie, CSRF_COOKIE);
  return preSession && PRE_SESSION_SECRET.test(preSession) ? preSession : undefined;
}

/**
 * The CSRF token of every form: derived (HMAC) from the browser's session, or from its pre-session
 * secret when signed out (minted here as a cookie when it has none). Bound to that session, it is
 * worthless in another member's browser, and a new one comes with each sign-in.
 */
export function csrfToken(config: Config, request: FastifyRequest, reply: FastifyReply): string {
  let secret = browserSecretOf(request);
  if (!secret) {
    secret = randomId('csrf', 24);
    reply.header('set-cookie', setCookie(config, CSRF_COOKIE, secret));
  }
  return deriveFromSecret(secret, CSRF_PURPOSE);
}

/** Where a completed sign-in goes: `next` as safeNext read it, or "My agents" when there was none. */
export function landingAfterSignIn(next: string): string {
  return next === NEXT_FALLBACK ? SIGNED_IN_LANDING : next;
}

/** Set with a new session: the pre-session secret has done its work, a later sign-out mints another. */
export function dropPreSessionCsrf(config: Config): string {
  return setCookie(config, CSRF_COOKIE, '', { maxAgeSeconds: 0 });
}

export function csrfField(token: string): SafeHtml {
  return html`<input type="hidden" name="csrf" value="${token}">`;
}

/** The form's field is the token of this browser's session (or pre-session), compared in constant time. */
export function hasValidCsrf(request: FastifyRequest): boolean {
  const secret = browserSecretOf(request);
  const field = formField(request, 'csrf');
  return Boolean(secret && field && constantTimeEqual(deriveFromSecret(secret, CSRF_PURPOSE), field));
}
