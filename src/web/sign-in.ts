import type { FastifyInstance, FastifyReply } from 'fastify';
import { revokeSession, SESSION_COOKIE, SESSION_TTL_MS } from '../domain/auth/sessions.ts';
import {
  issueSignInLink,
  linkOpenedSession,
  redeemInAskingBrowser,
  redeemSignInLink,
  SIGN_IN_BROWSER_COOKIE,
  SIGN_IN_LINK_TTL_MS,
  signInBrowserSecret,
} from '../domain/auth/sign-in.ts';
import { normalizeEmail } from '../domain/members/members.ts';
import { readCookie } from '../http/client.ts';
import type { Deps } from '../operations/services.ts';
import {
  acceptFormBodies,
  csrfField,
  csrfToken,
  dropPreSessionCsrf,
  formField,
  hasValidCsrf,
  landingAfterSignIn,
  safeNext,
  setCookie,
} from './forms.ts';
import { html } from './html.ts';
import { oidcButton } from './oidc-sign-in.ts';
import { refuseForgery, sendPage, signedIn } from './respond.ts';

/** The asking browser's cookie goes only to the sign-in pages, and lives as long as a link. */
const BROWSER_COOKIE_PATH = '/signin';

/** Email magic-link sign-in, sign-out and, without an SMTP server, the dev outbox (docs/pages.md). */
export function registerSignInPages(app: FastifyInstance, deps: Deps): void {
  const { mailer } = deps;
  const emailLinks = mailer.delivery !== 'oidc-only';
  const browserCookie = (value: string, seconds: number) =>
    setCookie(deps.config, SIGN_IN_BROWSER_COOKIE, value, {
      maxAgeSeconds: seconds,
      path: BROWSER_COOKIE_PATH,
    });

  /** A new session's cookies, and on to where the member was going. */
  const signedInTo = (reply: FastifyReply, sessionId: string, next: string) =>
    reply
      .header('cache-control', 'no-store')
      .header(
        'set-cookie',
        setCookie(deps.config, SESSION_COOKIE, sessionId, { maxAgeSeconds: SESSION_TTL_MS / 1000 }),
      )
      .header('set-cookie', dropPreSessionCsrf(deps.config))
      .header('set-cookie', browserCookie('', 0))
      .redirect(landingAfterSignIn(next), 303);

  const linkExpired = (reply: FastifyReply, next: string) => {
    const again = next === '/signin' ? '/signin' : `/signin?next=${encodeURIComponent(next)}`;
    return sendPage(
      reply,
      400,
      'Link expired',
      html`<h1>This link has expired or was already used</h1><p><a href="${again}">Ask for a new one</a>.</p>`,
    );
  };

  app.register(async (scope) => {
    acceptFormBodies(scope, deps.config);

    scope.get('/signin', async (request, reply) => {
      const csrf = csrfToken(deps.config, request, reply);
      const session = await signedIn(deps, request);
      if (session) {
        return sendPage(
          reply,
          200,
          'Signed in',
          html`<h1>Signed in</h1><p>You are signed in as <strong>${session.member.name}</strong> (${session.member.email}), tier <strong>${session.member.tier}</strong>.</p>
<form method="post" action="/signout">${csrfField(csrf)}<button type="submit">Sign out</button></form>`,
        );
      }
      const next = safeNext((request.query as Record<string, unknown>).next);
      return sendPage(
        reply,
        200,
        'Sign in',
        html`<h1>Sign in</h1>${oidcButton(deps.config, next)}${
          emailLinks
            ? html`<p>We send a single-use sign-in link to your email address. Opened in this browser, it signs you in at once; opened anywhere else, it asks you to confirm first.</p>
<form method="post" action="/signin">${csrfField(csrf)}<input type="hidden" name="next" value="${next}">
<label for="email">Email address</label><br>
<input id="email" name="email" type="email" autocomplete="email" required maxlength="255">
<button type="submit">Send me a link</button></form>`
            : ''
        }`,
      );
    });

    scope.post('/signin', async (request, reply) => {
      // Nothing to protect when email sign-in is off: the page never showed this form.
      if (!emailLinks) {
        return sendPage(
          reply,
          404,
          'Sign in',
          html`<h1>Email sign-in is off here</h1><p>This community signs people in through its own provider: <a href="/signin">sign in</a>.</p>`,
        );
      }
      if (!hasValidCsrf(request)) return refuseForgery(reply);
      const email = normalizeEmail(formField(request, 'email'));
      if (!email) {
        return sendPage(
          reply,
          400,
          'Sign in',
          html`<h1>That is not an email address</h1><p><a href="/signin">Try again</a>.</p>`,
        );
      }
      // Every sender gets the cookie, member or not: the answer stays the same for all.
      const browserSecret = signInBrowserSecret(readCookie(request.headers.cookie, SIGN_IN_BROWSER_COOKIE));
      reply.header('set-cookie', browserCookie(browserSecret, SIGN_IN_LINK_TTL_MS / 1000));
      const secret = await issueSignInLink(deps, email, browserSecret);
      if (secret) {
        const next = safeNext(formField(request, 'next'));
        const back = next === '/signin' ? '' : `&next=${encodeURIComponent(next)}`;
        const link = `${deps.config.publicUrl}/signin/confirm?link=${encodeURIComponent(secret)}${back}`;
        // Sent in the background: the answer must not take longer, or fail, only for addresses that
        // may sign in (that would tell who is a member). A failed send is logged without the link.
        mailer
          .send({
            to: email,
            subject: `Your sign-in link for ${deps.config.communityName}`,
            text: `Open this link within 15 minutes to sign in to ${deps.config.communityName}:\n\n${link}\n\nIf you did not ask for it, ignore this mail.`,
            at: deps.clock.now(),
          })
          .catch((error: Error) =>
            request.log.error(
              { err: { message: error.message, code: (error as { code?: string }).code } },
              'sign-in mail not sent',
            ),
          );
      }
      // The same answer whether or not the address belongs to a member.
      const outbox = mailer.outbox
        ? html`<p>No mail server is configured: the link is in the development outbox, at the address the server printed on its terminal when it started.</p>`
        : '';
      return sendPage(
        reply,
        200,
        'Check your mail',
        html`<h1>Check your mail</h1><p>If ${email} may sign in here, a link is on its way. It works once, for 15 minutes.</p>${outbox}`,
      );
    });

    // Mail scanners and link previewers open links too, without our cookies: only the browser that
    // asked for the link (its `__signin` cookie) is signed in by opening it; any other gets a button.
    scope.get('/signin/confirm', async (request, reply) => {
      const query = request.query as Record<string, unknown>;
      const link = typeof query.link === 'string' ? query.link : '';
      const next = safeNext(query.next);
      const session = await signedIn(deps, request);
      // Opened again where it already signed in (a mail program opening it twice): on to `next`.
      if (session && (await linkOpenedSession(deps, link, session.sessionHash)))
        return reply.redirect(landingAfterSignIn(next), 303);
      const browserSecret = readCookie(request.headers.cookie, SIGN_IN_BROWSER_COOKIE);
      // A speculative fetch (prefetch, prerender) is not the member opening the link.
      const speculative = /prefetch|prerender/i.test(String(request.headers['sec-purpose'] ?? ''));
      if (browserSecret && !speculative) {
        const opened = await redeemInAskingBrowser(deps, link, browserSecret);
        if (opened.outcome === 'signed_in') return signedInTo(reply, opened.sessionId, next);
        if (opened.outcome === 'spent') return linkExpired(reply, next);
      }
      const csrf = csrfToken(deps.config, request, reply);
      return sendPage(
        reply,
        200,
        'Sign in',
        html`<h1>Finish signing in</h1>
<p>This link was opened somewhere other than the browser that asked for it (another device, or a mail program checking it), so it waits for you: press the button to sign in here.</p>
<form method="post" action="/signin/confirm">${csrfField(csrf)}<input type="hidden" name="link" value="${link}">
<input type="hidden" name="next" value="${next}">
<button type="submit">Sign in</button></form>`,
      );
    });

    scope.post('/signin/confirm', async (request, reply) => {
      // Worked out before the link is spent: nothing after spending it may fail.
      const next = safeNext(formField(request, 'next'));
      const link = formField(request, 'link') ?? '';
      /** The same form sent again by the browser this link signed in: it goes on to `next`. */
      const alreadySignedInByLink = async () => {
        const session = await signedIn(deps, request);
        return session !== undefined && (await linkOpenedSession(deps, link, session.sessionHash));
      };
      if (!hasValidCsrf(request)) {
        // Its form carried the pre-session token; this browser's forms now carry its session's.
        if (await alreadySignedInByLink()) return reply.redirect(landingAfterSignIn(next), 303);
        return refuseForgery(reply);
      }
      const sessionId = await redeemSignInLink(deps, link);
      if (!sessionId) {
        if (await alreadySignedInByLink()) return reply.redirect(landingAfterSignIn(next), 303);
        return linkExpired(reply, next);
      }
      return signedInTo(reply, sessionId, next);
    });

    scope.post('/signout', async (request, reply) => {
      if (!hasValidCsrf(request)) return refuseForgery(reply);
      const sessionId = readCookie(request.headers.cookie, SESSION_COOKIE);
      if (sessionId) await revokeSession(deps.db, deps.clock, sessionId);
      return reply
        .header('set-cookie', setCookie(deps.config, SESSION_COOKIE, '', { maxAgeSeconds: 0 }))
        .redirect('/signin', 303);
    });

    const outbox = mailer.outbox;
    if (outbox) {
      // Only with the key printed at start; without it, the answer of a path that does not exist.
      scope.get('/dev/outbox', async (request, reply) => {
        if (!outbox.opens((request.query as Record<string, unknown>).key)) return reply.callNotFound();
        reply.header('cache-control', 'no-store');
        return sendPage(
          reply,
          200,
          'Dev outbox',
          html`<h1>Dev outbox</h1><p>Mail this instance would send, newest first (no SMTP_URL is configured; kept in memory).</p>
${outbox.messages.map((m) => html`<article class="op"><p><strong>To:</strong> ${m.to}<br><strong>Subject:</strong> ${m.subject}<br><strong>At:</strong> ${new Date(m.at).toISOString()}</p><pre>${m.text}</pre></article>`)}`,
        );
      });
    }
  });
}
