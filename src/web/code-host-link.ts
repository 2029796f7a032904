import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { iso } from '../clock.ts';
import { ApiError } from '../core/errors.ts';
import { CodeHost, CodeHostError } from '../domain/leaderboard/code-host.ts';
import {
  type LinkSource,
  linkAccount,
  linkOf,
  setOptIn,
  unlinkAccount,
} from '../domain/leaderboard/links.ts';
import { standingOf } from '../domain/leaderboard/standings.ts';
import { readCookie } from '../http/client.ts';
import type { Deps } from '../operations/services.ts';
import { constantTimeEqual, randomId } from '../secrets.ts';
import { acceptFormBodies, csrfField, csrfToken, formField, hasValidCsrf, setCookie } from './forms.ts';
import { html, type SafeHtml } from './html.ts';
import { refuseForgery, sendPage, signedIn } from './respond.ts';

const PAGE = '/leaderboard/link';
const CALLBACK = `${PAGE}/callback`;
/** The OAuth `state` lives only in this short-lived HttpOnly cookie, scoped to the link pages. */
const STATE_COOKIE = '__vcs_state';
const STATE_TTL_SECONDS = 600;
const PAT_MAX = 255;

const alert = (message: string) => html`<p role="alert" class="warning">${message}</p>`;

/** What the member sees when the host could not confirm the account: never a 5xx of ours. */
function hostProblem(error: CodeHostError): { status: number; notice: SafeHtml } {
  if (error.failure === 'refused' || error.failure === 'not_found')
    return { status: 400, notice: alert('The code host did not accept this; nothing was linked.') };
  return {
    status: 502,
    notice: alert('The code host could not be reached or refused to answer; try again later.'),
  };
}

/** Link a code-hosting account (OAuth or a personal access token), opt in or out, unlink (docs/pages.md). */
export function registerCodeHostLinkPage(app: FastifyInstance, deps: Deps): void {
  const host = new CodeHost(deps.config.codeHost);
  const redirectUri = `${deps.config.publicUrl}${CALLBACK}`;
  /** Path-scoped: the state travels only to the link pages, and the callback clears it. */
  const stateCookie = (value: string, maxAgeSeconds: number) =>
    setCookie(deps.config, STATE_COOKIE, value, { maxAgeSeconds, path: PAGE });

  async function render(request: FastifyRequest, reply: FastifyReply, status: number, notice?: SafeHtml) {
    const session = await signedIn(deps, request);
    if (!session) return reply.redirect('/signin', 303);
    const csrf = csrfToken(deps.config, request, reply);
    const [link, standing] = await Promise.all([
      linkOf(deps.db, session.member.id),
      standingOf(deps, session.member.id),
    ]);
    const optedIn = Boolean(link && Number(link.opted_in));
    return sendPage(
      reply,
      status,
      'Code-host link',
      html`<h1>Code-host link</h1>${notice ?? ''}
<p>The weekly commit leaderboard counts the commits of members who link an account on <code>${deps.config.codeHost.webUrl}</code> and opt in. The service keeps who the account is, never a token of yours.</p>
${
  link
    ? html`<section id="link"><p>Linked: <strong id="vcs-username">${link.username}</strong> (${link.source === 'oauth' ? 'signed in on the host' : 'personal access token'}, checked ${iso(Number(link.verified_at)).slice(0, 16).replace('T', ' ')} UTC).</p>
<p>Leaderboard: <strong id="optin">${optedIn ? 'opted in' : 'not opted in'}</strong>${standing ? html`; this week rank ${standing.rank} of ${standing.total} with ${standing.count} commits` : ''}.</p>
<form method="post" action="${PAGE}/optin">${csrfField(csrf)}<input type="hidden" name="optIn" value="${optedIn ? 'false' : 'true'}"><button type="submit">${optedIn ? 'Leave the leaderboard' : 'Join the leaderboard'}</button></form>
<form method="post" action="${PAGE}/unlink">${csrfField(csrf)}<button type="submit">Unlink this account</button></form></section>`
    : html`<p id="link">No account linked.</p>`
}
<h2>${link ? 'Link another account' : 'Link an account'}</h2>
${
  host.oauthEnabled
    ? html`<form method="post" action="${PAGE}/oauth">${csrfField(csrf)}<button type="submit">Sign in on the code host</button></form>`
    : ''
}
<form method="post" action="${PAGE}/token">${csrfField(csrf)}
<p><label for="pat">Or a personal access token (no scopes needed; used once to read your username, then dropped)</label><br><input id="pat" name="token" type="password" autocomplete="off" maxlength="${PAT_MAX}" required></p>
<button type="submit">Check the token and link</button></form>`,
    );
  }

  /** Proves and records the account behind a host token, then shows the page. */
  async function link(
    request: FastifyRequest,
    reply: FastifyReply,
    memberId: string,
    source: LinkSource,
    token: () => Promise<string>,
  ) {
    try {
      await linkAccount(deps, memberId, await host.accountOf(await token()), source);
    } catch (error) {
      if (error instanceof CodeHostError) {
        request.log.warn({ failure: error.failure }, error.message);
        const problem = hostProblem(error);
        return render(request, reply, problem.status, problem.notice);
      }
      if (error instanceof ApiError && error.status < 500)
        return render(request, reply, error.status, alert(error.message));
      throw error;
    }
    return reply.redirect(PAGE, 303);
  }

  app.register(async (scope) => {
    acceptFormBodies(scope, deps.config);
    scope.get(PAGE, (request, reply) => render(request, reply, 200));

    scope.post(`${PAGE}/oauth`, async (request, reply) => {
      if (!hasValidCsrf(request)) return refuseForgery(reply);
      if (!(await signedIn(deps, request))) return reply.redirect('/signin', 303);
      if (!host.oauthEnabled)
        return render(request, reply, 404, alert('Signing in on the code host is not configured here.'));
      const state = randomId('st', 24);
      reply.header('set-cookie', stateCookie(state, STATE_TTL_SECONDS));
      return reply.redirect(host.authorizeUrl(state, redirectUri), 303);
    });

    scope.get(CALLBACK, async (request, reply) => {
      const session = await signedIn(deps, request);
      if (!session) return reply.redirect('/signin', 303);
      const query = request.query as Record<string, unknown>;
      const expected = readCookie(request.headers.cookie, STATE_COOKIE);
      reply.header('set-cookie', stateCookie('', 0));
      const state = typeof query.state === 'string' ? query.state : '';
      if (!expected || !state || !constantTimeEqual(expected, state))
        return render(
          request,
          reply,
          400,
          alert('This sign-in on the code host was not started here, or took too long; start again.'),
        );
      if (typeof query.code !== 'string' || !query.code || query.code.length > 512)
        return render(request, reply, 400, alert('The code host did not grant access; nothing was linked.'));
      const code = query.code;
      return link(request, reply, session.member.id, 'oauth', () => host.exchangeCode(code, redirectUri));
    });

    scope.post(`${PAGE}/token`, async (request, reply) => {
      if (!hasValidCsrf(request)) return refuseForgery(reply);
      const session = await signedIn(deps, request);
      if (!session) return reply.redirect('/signin', 303);
      const token = (formField(request, 'token') ?? '').trim();
      if (!token || token.length > PAT_MAX || /\s/.test(token))
        return render(request, reply, 400, alert('Paste one personal access token.'));
      return link(request, reply, session.member.id, 'token', async () => token);
    });

    scope.post(`${PAGE}/optin`, async (request, reply) => {
      if (!hasValidCsrf(request)) return refuseForgery(reply);
      const session = await signedIn(deps, request);
      if (!session) return reply.redirect('/signin', 303);
      try {
        await setOptIn(deps, session.member.id, formField(request, 'optIn') === 'true');
      } catch (error) {
        if (error instanceof ApiError && error.status < 500)
          return render(request, reply, error.status, alert(error.message));
        throw error;
      }
      return reply.redirect(PAGE, 303);
    });

    scope.post(`${PAGE}/unlink`, async (request, reply) => {
      if (!hasValidCsrf(request)) return refuseForgery(reply);
      const session = await signedIn(deps, request);
      if (!session) return reply.redirect('/signin', 303);
      await unlinkAccount(deps, session.member.id);
      return reply.redirect(PAGE, 303);
    });
  });
}
