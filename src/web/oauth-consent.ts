import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ALL_SCOPES, isScope } from '../domain/access/scopes.ts';
import {
  ClientDocumentCache,
  clientFromDocument,
  isClientDocumentUrl,
} from '../domain/auth/client-metadata-documents.ts';
import {
  bindAuthorization,
  decideAuthorization,
  startAuthorization,
} from '../domain/auth/oauth-authorizations.ts';
import { findRegisteredClient, type OAuthClient, redirectMatches } from '../domain/auth/oauth-clients.ts';
import { resourceOf, resourcesOf } from '../http/bearer-challenge.ts';
import { rateKeyForIp } from '../http/client.ts';
import { overPerIpLimit } from '../operations/per-ip-limit.ts';
import type { Deps } from '../operations/services.ts';
import type { OAuthAuthorizationsTable } from '../storage/schema.ts';
import { acceptFormBodies, csrfField, csrfToken, formField, hasValidCsrf } from './forms.ts';
import { html } from './html.ts';
import { contentSecurityPolicy } from './page-security.ts';
import { refuseForgery, sendPage, signedIn } from './respond.ts';
import { grantCard } from './scope-words.ts';

const CONSENT = '/oauth/consent';
const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
const MAX_STATE = 500;

/** Where a client's redirect URI lives, as a CSP source: its origin, or the scheme of a native app. */
function formTargetOf(redirectUri: string): string {
  const url = new URL(redirectUri);
  return url.origin !== 'null' ? url.origin : url.protocol;
}

/** The redirect back to the client (RFC 6749 §4.1.2), naming the issuer (RFC 9207). */
function redirectBack(base: string, redirectUri: string, params: Record<string, string | null | undefined>) {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value) url.searchParams.set(name, value);
  url.searchParams.set('iss', base);
  return url.toString();
}

function query(request: FastifyRequest): Record<string, string | undefined> {
  const raw = request.query as Record<string, unknown>;
  const out: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(raw ?? {})) if (typeof value === 'string') out[name] = value;
  return out;
}

/**
 * The authorization endpoint (OAuth 2.1 §4.1.1) and its consent page, built from the device-approval
 * page and held to its standard: sign-in first, a request bound to the session that opens it,
 * the session's CSRF token and the cross-site check on the decision, the client's name marked unverified,
 * the redirect host shown, the scopes asked against what the member's tier grants (docs/pages.md).
 */
export function registerOAuthConsentPages(app: FastifyInstance, deps: Deps): void {
  const base = deps.config.publicUrl;
  const documents = { allowPrivate: deps.config.oauthClientDocumentsFromPrivateAddresses };
  const fetchedDocuments = new ClientDocumentCache();

  /** A registered client, or one whose client_id is the URL of its metadata document (fetched now). */
  async function findClient(clientId: string): Promise<{ client: OAuthClient } | { problem: string }> {
    if (isClientDocumentUrl(clientId, documents)) {
      const fetched = await clientFromDocument(clientId, documents, fetchedDocuments, deps.clock.now());
      return fetched.ok
        ? { client: fetched.client }
        : { problem: `The application's client_id is a URL, but ${fetched.problem}.` };
    }
    const client = await findRegisteredClient(deps, clientId);
    return client ? { client } : { problem: 'The application is not registered here (unknown client_id).' };
  }

  const problemPage = (reply: FastifyReply, status: number, message: string) =>
    sendPage(
      reply,
      status,
      'Cannot authorize',
      html`<h1>Cannot authorize this application</h1><p>${message}</p><p>Nothing was granted. Go back to the application and start again.</p>`,
    );

  const refusals = {
    unknown: [404, 'No pending request matches this link.'],
    expired: [410, 'This request has expired. The application has to start again.'],
    decided: [409, 'This request was already decided.'],
    bound_elsewhere: [403, 'This request was opened in another session. Only that session can decide it.'],
    no_member: [403, 'Your account is gone.'],
  } as const;
  const refuse = (reply: FastifyReply, reason: keyof typeof refusals) =>
    problemPage(reply, refusals[reason][0], refusals[reason][1]);

  function review(
    reply: FastifyReply,
    csrf: string,
    secret: string,
    row: OAuthAuthorizationsTable,
    tier: string,
  ) {
    const requested = JSON.parse(row.scopes) as string[];
    const { granted, denied } = deps.tiers.split(tier, requested);
    const redirect = new URL(row.redirect_uri);
    const host = redirect.host || redirect.protocol;
    reply.header(
      'content-security-policy',
      contentSecurityPolicy(deps.config, [formTargetOf(row.redirect_uri)]),
    );
    return sendPage(
      reply,
      200,
      'Authorize an application',
      html`<h1>An application asks to act for you in ${deps.config.communityName}</h1>
<p class="warning"><strong>Approve only if you started this yourself just now</strong>, from the application you expect.</p>
<section class="card" aria-labelledby="who"><h2 id="who">Who is asking</h2>
<dl class="facts">
<dt>Application</dt><dd><strong id="client-name">${row.client_name ?? 'unnamed client'}</strong> <span class="badge risk-medium">unverified: the application chose this name</span></dd>
<dt>Sends you back to</dt><dd><strong id="redirect-host">${host}</strong> <code>${row.redirect_uri}</code></dd>
<dt>Client id</dt><dd><code>${row.client_id}</code></dd>
<dt>For</dt><dd><code>${row.resource}</code></dd>
</dl>
<p>After your decision you are sent to ${host}.</p></section>
${grantCard(granted, denied, tier)}
<form method="post" action="${CONSENT}">${csrfField(csrf)}<input type="hidden" name="request" value="${secret}">
<section class="card" aria-labelledby="mode"><h2 id="mode">Sandbox or real</h2>
<label class="choice" for="sandbox"><input type="checkbox" id="sandbox" name="sandbox" value="yes"> <span>Sandbox: real reads, simulated writes; nothing it does changes anything. Leave unticked to let it act for you for real.</span></label></section>
<div class="actions"><button class="primary" type="submit" name="decision" value="approve">Approve</button>
<button class="danger" type="submit" name="decision" value="deny">Deny</button></div></form>`,
    );
  }

  app.register(async (scope) => {
    acceptFormBodies(scope, deps.config);

    scope.get('/oauth/authorize', async (request, reply) => {
      const q = query(request);
      const limit = deps.config.limits.oauthAuthorizationsPerMinute;
      if (await overPerIpLimit(deps, 'oauth_authorize_ip', limit, rateKeyForIp(request.ip)))
        return problemPage(reply, 429, 'Too many authorization requests from this address. Wait a minute.');
      const found = q.client_id
        ? await findClient(q.client_id)
        : { problem: 'The application is not registered here (no client_id).' };
      // Until the client and its redirect URI are known good, errors are shown here, never redirected.
      if ('problem' in found) return problemPage(reply, 400, found.problem);
      const { client } = found;
      if (!q.redirect_uri || !redirectMatches(client.redirectUris, q.redirect_uri))
        return problemPage(reply, 400, 'The redirect address is not one the application registered.');
      const fail = (error: string, description: string) =>
        reply.redirect(
          redirectBack(base, q.redirect_uri!, { error, error_description: description, state: q.state }),
          303,
        );
      if (q.response_type !== 'code')
        return fail('unsupported_response_type', 'Only response_type=code is served.');
      if (q.code_challenge_method !== 'S256' || !CHALLENGE.test(q.code_challenge ?? ''))
        return fail('invalid_request', 'PKCE is required: code_challenge with code_challenge_method=S256.');
      if ((q.state ?? '').length > MAX_STATE)
        return fail('invalid_request', `state is at most ${MAX_STATE} characters.`);
      if (q.resource !== undefined && !resourcesOf(base).includes(q.resource))
        return fail('invalid_target', `resource must be one of ${resourcesOf(base).join(', ')}.`);
      const scopes = q.scope === undefined ? ALL_SCOPES : q.scope.split(' ').filter(Boolean);
      const unknown = scopes.filter((scope) => !isScope(scope));
      if (unknown.length)
        return fail('invalid_scope', `Unknown scopes: ${unknown.join(', ').slice(0, 200)}.`);
      const secret = await startAuthorization(deps, {
        client,
        redirectUri: q.redirect_uri,
        scopes,
        state: q.state,
        codeChallenge: q.code_challenge!,
        resource: q.resource ?? resourceOf(base, 'rest'),
      });
      return reply.redirect(`${CONSENT}?request=${secret}`, 303);
    });

    scope.get(CONSENT, async (request, reply) => {
      const csrf = csrfToken(deps.config, request, reply);
      const secret = (query(request).request ?? '').slice(0, 100);
      const session = await signedIn(deps, request);
      if (!session) {
        const next = `${CONSENT}?request=${secret}`;
        return sendPage(
          reply,
          200,
          'Authorize an application',
          html`<h1>Sign in first</h1><p>An application asks to act for you. <a href="/signin?next=${encodeURIComponent(next)}">Sign in</a>; you come back here afterwards to decide.</p>`,
        );
      }
      const bound = await bindAuthorization(deps, secret, session.sessionHash);
      if (!bound.ok) return refuse(reply, bound.reason);
      return review(reply, csrf, secret, bound.authorization, session.member.tier);
    });

    scope.post(CONSENT, async (request, reply) => {
      if (!hasValidCsrf(request)) return refuseForgery(reply);
      const session = await signedIn(deps, request);
      if (!session) return reply.redirect('/signin', 303);
      const secret = (formField(request, 'request') ?? '').slice(0, 100);
      const bound = await bindAuthorization(deps, secret, session.sessionHash);
      if (!bound.ok) return refuse(reply, bound.reason);
      const approve = formField(request, 'decision') === 'approve';
      const decided = await decideAuthorization(deps, bound.authorization, session.member.id, {
        approve,
        sandbox: formField(request, 'sandbox') === 'yes',
      });
      if (!decided.ok) return refuse(reply, decided.reason);
      const row = decided.authorization;
      const target = approve
        ? redirectBack(base, row.redirect_uri, { code: decided.code, state: row.state })
        : redirectBack(base, row.redirect_uri, {
            error: 'access_denied',
            error_description: 'The member declined the request.',
            state: row.state,
          });
      return reply.redirect(target, 303);
    });
  });
}
