import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Config } from '../config.ts';
import {
  newOidcLoginSecrets,
  OIDC_LOGIN_COOKIE,
  OIDC_LOGIN_TTL_MS,
  spendOidcLogin,
  storeOidcLogin,
} from '../domain/auth/oidc-logins.ts';
import {
  createOidcRelyingParty,
  type OidcFailureReason,
  OidcSignInError,
} from '../domain/auth/oidc-relying-party.ts';
import { SESSION_COOKIE, SESSION_TTL_MS } from '../domain/auth/sessions.ts';
import { openSessionForVerifiedEmail } from '../domain/auth/verified-email.ts';
import { readCookie } from '../http/client.ts';
import type { Deps } from '../operations/services.ts';
import { transact } from '../storage/transactions.ts';
import { dropPreSessionCsrf, landingAfterSignIn, safeNext, setCookie } from './forms.ts';
import { html, type SafeHtml } from './html.ts';
import { sendPage } from './respond.ts';

export const OIDC_CALLBACK_PATH = '/signin/oidc/callback';

/** The single sign-on button of the sign-in page; nothing when no provider is configured. */
export function oidcButton(config: Config, next: string): SafeHtml {
  if (!config.oidc) return html``;
  return html`<form method="get" action="/signin/oidc"><input type="hidden" name="next" value="${next}">
<button type="submit">${config.oidc.label}</button></form><p>Or:</p>`;
}

const FAILURES: Record<OidcFailureReason, { status: number; title: string; text: string }> = {
  unreachable: {
    // Not a 5xx: this service is fine, the provider it depends on is not (424 Failed Dependency).
    status: 424,
    title: 'The sign-in provider did not answer',
    text: 'The single sign-on provider could not be reached or answered wrongly. Try again in a moment, or sign in by email.',
  },
  rejected: {
    status: 400,
    title: 'The sign-in provider did not sign you in',
    text: 'Its answer was refused or could not be verified. Start again.',
  },
  no_email: {
    status: 403,
    title: 'No email address',
    text: 'The single sign-on provider did not tell us your email address, which this community uses to know you.',
  },
  unverified_email: {
    status: 403,
    title: 'Email address not verified',
    text: 'The single sign-on provider has not verified your email address. Verify it there, then try again.',
  },
};

/** OpenID Connect sign-in beside the mailed link (docs/pages.md); registered only when configured. */
export function registerOidcSignInPages(app: FastifyInstance, deps: Deps): void {
  const config = deps.config.oidc;
  if (!config) return;
  const relyingParty = createOidcRelyingParty(config, deps.config.publicUrl + OIDC_CALLBACK_PATH);
  const loginCookie = (value: string, seconds: number) =>
    setCookie(deps.config, OIDC_LOGIN_COOKIE, value, { maxAgeSeconds: seconds });

  const failure = (reply: FastifyReply, error: unknown) => {
    const reason = error instanceof OidcSignInError ? error.reason : 'rejected';
    app.log.warn({ reason, cause: String((error as Error)?.cause ?? error) }, 'oidc sign-in failed');
    const { status, title, text } = FAILURES[reason];
    return sendPage(reply, status, title, html`<h1>${title}</h1><p>${text}</p>${backToSignIn}`);
  };

  app.get('/signin/oidc', async (request, reply) => {
    const next = safeNext((request.query as Record<string, unknown>).next);
    const secrets = newOidcLoginSecrets();
    let destination: URL;
    try {
      destination = await relyingParty.authorizationUrl(secrets);
    } catch (error) {
      return failure(reply, error);
    }
    await storeOidcLogin(deps, secrets, next);
    return reply
      .header('cache-control', 'no-store')
      .header('set-cookie', loginCookie(secrets.browserSecret, OIDC_LOGIN_TTL_MS / 1000))
      .redirect(destination.href, 303);
  });

  app.get(OIDC_CALLBACK_PATH, async (request, reply) => {
    const query = new URLSearchParams(request.url.split('?')[1] ?? '');
    // The login cookie is single-use whatever happens next.
    reply.header('set-cookie', loginCookie('', 0));
    const state = query.get('state');
    const browserSecret = readCookie(request.headers.cookie, OIDC_LOGIN_COOKIE);
    const login = state && browserSecret ? await spendOidcLogin(deps, state, browserSecret) : undefined;
    if (!login) {
      return sendPage(
        reply,
        400,
        'Sign-in expired',
        html`<h1>This sign-in is no longer valid</h1><p>It expired, was already used, or was started in another browser.</p>${backToSignIn}`,
      );
    }
    const providerError = query.get('error');
    if (providerError) {
      const declined = providerError === 'access_denied';
      return sendPage(
        reply,
        declined ? 403 : 400,
        'Not signed in',
        html`<h1>${declined ? 'You did not allow the sign-in' : 'The sign-in provider did not sign you in'}</h1><p>The provider answered <code>${providerError.slice(0, 100)}</code>.</p>${backToSignIn}`,
      );
    }
    let email: string;
    try {
      email = await relyingParty.verifiedEmail(query, login.secrets);
    } catch (error) {
      return failure(reply, error);
    }
    const sessionId = await transact(deps, (tx) => openSessionForVerifiedEmail(tx, deps, email));
    if (!sessionId) {
      return sendPage(
        reply,
        403,
        'Not a member',
        html`<h1>Not a member here</h1><p>No member has the address <strong class="wrap">${email}</strong>, and this community is invitation-only: ask an operator to invite it.</p>${backToSignIn}`,
      );
    }
    return (
      reply
        .header(
          'set-cookie',
          setCookie(deps.config, SESSION_COOKIE, sessionId, { maxAgeSeconds: SESSION_TTL_MS / 1000 }),
        )
        .header('set-cookie', dropPreSessionCsrf(deps.config))
        // Checked again on the way out: a row stored before the check tightened may hold anything.
        .redirect(landingAfterSignIn(safeNext(login.next)), 303)
    );
  });
}

const backToSignIn = html`<p><a href="/signin">Back to sign-in</a></p>`;
