import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.ts';
import { SESSION_COOKIE, verifySession } from '../domain/auth/sessions.ts';
import { readCookie } from '../http/client.ts';
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
