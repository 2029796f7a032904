import type { FastifyReply, FastifyRequest } from 'fastify';
import { SESSION_COOKIE, verifySession } from '../domain/auth/sessions.ts';
import { readCookie } from '../http/client.ts';
import { refusalOf } from '../operations/can-call.ts';
import type { Deps } from '../operations/services.ts';
import type { Operation } from '../operations/types.ts';
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
    html`<h1>This form has expired</h1><p>It was not made for this browser's sign-in: it is from before you signed in or out, or from another browser. Go back, reload the page and submit it again.</p>`,
  );
}

export function operatorsOnly(reply: FastifyReply, tier: string) {
  return sendPage(
    reply,
    403,
    'Operators only',
    html`<h1>Operators only</h1><p>Your tier (${tier}) cannot use this page.</p>`,
  );
}

type Session = Awaited<ReturnType<typeof verifySession>>;
const sessionOfRequest = new WeakMap<FastifyRequest, Promise<Session>>();

/**
 * The member whose session cookie came with the request, looked up once per request: the page and
 * its header (page-viewer.ts) ask the same question.
 */
export function signedIn(deps: Deps, request: FastifyRequest): Promise<Session> {
  let session = sessionOfRequest.get(request);
  if (!session) {
    const sessionId = readCookie(request.headers.cookie, SESSION_COOKIE);
    session = Promise.resolve(
      sessionId ? verifySession(deps.db, sessionId, deps.clock.now(), deps.database.authCache) : undefined,
    );
    sessionOfRequest.set(request, session);
  }
  return session;
}

/**
 * The operator behind a console page and a CSRF token for its forms, or the reply already sent
 * (sign in, or 403). Whether the signed-in member may use the page is whether they may call the
 * operation its forms run: can-call.ts decides, as it does for every call that operation gets.
 */
export async function requireOperator(
  deps: Deps,
  request: FastifyRequest,
  reply: FastifyReply,
  decides: Operation,
) {
  const session = await signedIn(deps, request);
  if (!session) return { reply: reply.redirect('/signin', 303) };
  if (refusalOf(decides, { kind: 'session', ...session }, deps.tiers))
    return { reply: operatorsOnly(reply, session.member.tier) };
  return { member: session.member, csrf: csrfToken(deps.config, request, reply) };
}
