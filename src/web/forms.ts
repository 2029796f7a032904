import { stringifySetCookie } from 'cookie';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import { readCookie } from '../http/client.ts';
import { crossSiteReason, isSafeMethod } from '../http/same-origin.ts';
import { constantTimeEqual, randomId } from '../secrets.ts';
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

/** Where to go after signing in: only a path on this site (never `//host` or a full URL). */
export function safeNext(raw: unknown): string {
  return typeof raw === 'string' && /^\/(?![/\\])[^\s]{0,500}$/.test(raw) ? raw : '/signin';
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

/**
 * Double-submit CSRF token: a random value in an HttpOnly cookie, echoed by every form as a hidden
 * field. A cross-site form cannot read the cookie, so it cannot send the matching field.
 */
export function csrfToken(config: Config, request: FastifyRequest, reply: FastifyReply): string {
  const existing = readCookie(request.headers.cookie, CSRF_COOKIE);
  if (existing && /^csrf_[A-Za-z0-9_-]{20,}$/.test(existing)) return existing;
  const token = randomId('csrf', 24);
  reply.header('set-cookie', setCookie(config, CSRF_COOKIE, token));
  return token;
}

export function csrfField(token: string): SafeHtml {
  return html`<input type="hidden" name="csrf" value="${token}">`;
}

export function hasValidCsrf(request: FastifyRequest): boolean {
  const cookie = readCookie(request.headers.cookie, CSRF_COOKIE);
  const field = formField(request, 'csrf');
  return Boolean(cookie && field && constantTimeEqual(cookie, field));
}
