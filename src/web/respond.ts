import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.ts';
import { SESSION_COOKIE, verifySession } from '../domain/auth/sessions.ts';
import { readCookie } from '../http/client.ts';
import { csrfToken } from './forms.ts';
import { html, page, type SafeHtml } from './html.ts';

/** Pages may show codes and secrets: none of them is cached. */
export function sendPage(reply: FastifyReply, status: number, title: string, body: SafeHtml) {
  return reply
    .code(status)
    .header('cache-control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(page(title, body));
}

export function refuseForgery(reply: FastifyReply) {
  return sendPage(
    reply,
    403,
    'Form expired',
    html`<h1>This form has expired</h1><p>Go back, reload the page and submit it again.</p>`,
  );
}

export async function signedIn(deps: Deps, request: FastifyRequest) {
  const sessionId = readCookie(request.headers.cookie, SESSION_COOKIE);
  return sessionId ? verifySession(deps.db, sessionId, deps.clock.now()) : undefined;
}

/** The operator behind the request and a CSRF token for the page, or the reply already sent (sign in, or 403). */
export async function requireOperator(
  deps: Deps,
  request: FastifyRequest,
  reply: FastifyReply,
  scope: string,
) {
  const session = await signedIn(deps, request);
  if (!session) return { reply: reply.redirect('/signin', 303) };
  if (!deps.tiers.grants(session.member.tier, scope)) {
    return {
      reply: sendPage(
        reply,
        403,
        'Operators only',
        html`<h1>Operators only</h1><p>Your tier (${session.member.tier}) cannot use this page.</p>`,
      ),
    };
  }
  return { member: session.member, csrf: csrfToken(deps.config, request, reply) };
}
