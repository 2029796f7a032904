import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { STARTER_SCOPE_SETS, STARTER_SET_NAMES } from '../domain/access/scopes.ts';
import { type ActivityView, recentActivity } from '../domain/activity/activity.ts';
import { signingOfTokens, type TokenSigning } from '../domain/auth/signing-keys.ts';
import { holdsToken, mintToken, pageTokens, revokeToken } from '../domain/auth/tokens.ts';
import { mcpInstallRecipe } from '../operations/auth/setup-check.ts';
import type { Deps } from '../operations/services.ts';
import { keyCell, registerKeyControls } from './agent-keys.ts';
import { acceptFormBodies, csrfField, csrfToken, formField, formList, hasValidCsrf } from './forms.ts';
import { copyScript, html, type SafeHtml } from './html.ts';
import { MY_AGENTS } from './my-agents.ts';
import { pageLinks, pageRequested } from './paging.ts';
import { refuseForgery, sendPage, signedIn } from './respond.ts';
import { scopeChoice, scopeList } from './scope-words.ts';
import { SIGNING_GUIDE } from './signing-guide.ts';

const PAGE = '/agent-console';
const NAME_MAX = 80;

const RECENT_CALLS = 200;

function when(ms: number | null): string {
  return ms === null ? 'never' : `${new Date(Number(ms)).toISOString().replace('T', ' ').slice(0, 16)} UTC`;
}

/**
 * A starter set is offered only to a member whose tier grants all of its scopes: a set cut down to
 * what the tier grants would mint a token that cannot do what its name says.
 */
function offered(name: string, grantable: readonly string[]): boolean {
  return STARTER_SCOPE_SETS[name].every((scope) => grantable.includes(scope));
}

/** The starter set the address asks for (?preset=…), limited to what the member's tier grants. */
function presetAsked(request: FastifyRequest, grantable: readonly string[]) {
  const name = (request.query as Record<string, unknown>).preset;
  if (typeof name !== 'string' || !Object.hasOwn(STARTER_SCOPE_SETS, name)) return undefined;
  if (!offered(name, grantable)) return undefined;
  return { name, scopes: STARTER_SCOPE_SETS[name] };
}

/**
 * A starter set as one button: a mint form carrying the set's name and the scopes of it the member's
 * tier grants (none granted: no button). It posts to the same mint route as the form below.
 */
function presetForm(name: string, grantable: readonly string[], csrf: string): SafeHtml | '' {
  if (!offered(name, grantable)) return '';
  const scopes = STARTER_SCOPE_SETS[name];
  const label = STARTER_SET_NAMES[name] ?? name;
  return html`<form method="post" action="${PAGE}/mint" class="preset">${csrfField(csrf)}<input type="hidden" name="name" value="${label}">${scopes.map(
    (scope) => html`<input type="hidden" name="scope" value="${scope}">`,
  )}<button type="submit" data-preset="${name}">Mint “${label}”</button></form>`;
}

/** The surface of the token's latest call among the member's recent ones. */
function lastSurface(activity: readonly ActivityView[], prefix: string): string | undefined {
  return activity.find((call) => call.token_prefix === prefix)?.surface;
}

type TokenRow = Awaited<ReturnType<typeof pageTokens>>['rows'][number];

/** One token: its state first, what it may do in words, when and where it was last used, its controls. */
function tokenCard(
  token: TokenRow,
  signing: TokenSigning | undefined,
  surface: string | undefined,
  csrf: string,
): SafeHtml {
  const live = token.revoked_at === null;
  const scopes = JSON.parse(token.scopes) as string[];
  const state = live
    ? html`<span class="badge state-active">Active</span>${token.sandbox ? html` <span class="badge state-sandbox">Sandbox</span>` : ''}`
    : html`<span class="badge state-revoked">Revoked ${when(token.revoked_at)}</span>`;
  return html`<article class="card" id="token-${token.id}" aria-labelledby="token-${token.id}-name"><h3 id="token-${token.id}-name">${token.name} ${state}</h3>
<dl class="facts"><dt>Token</dt><dd><code>${token.prefix}…</code></dd>
<dt>Last used</dt><dd>${when(token.last_used_at)}${surface ? html` over <strong>${surface}</strong>` : ''}</dd>
<dt>Created</dt><dd>${when(token.created_at)}, by the <span class="source">${token.source}</span> flow</dd></dl>
<details><summary>What it may do (${scopes.length})</summary>${scopeList(`scopes-${token.id}`, scopes)}</details>
${
  live
    ? html`<div class="key">${keyCell(token.id, signing, csrf)}</div>
<details class="confirm"><summary>Revoke ${token.name}…</summary><p>The agent using it is refused from its next call. This cannot be undone.</p>
<form method="post" action="${PAGE}/revoke">${csrfField(csrf)}<input type="hidden" name="token_id" value="${token.id}"><button class="danger primary" type="submit" aria-label="Revoke ${token.name}">Yes, revoke it</button></form></details>`
    : ''
}</article>`;
}

/**
 * The member's own tokens: each with its state, what it may do in words, where it was last used, and
 * revoke behind a confirmation; mint from a starter set or by hand (plaintext shown once) (docs/pages.md).
 */
export function registerAgentConsole(app: FastifyInstance, deps: Deps): void {
  async function render(request: FastifyRequest, reply: FastifyReply, status: number, notice?: SafeHtml) {
    const session = await signedIn(deps, request);
    if (!session) return reply.redirect('/signin', 303);
    const csrf = csrfToken(deps.config, request, reply);
    const asked = pageRequested(request);
    const [page, activity] = await Promise.all([
      pageTokens(deps.db, session.member.id, asked),
      recentActivity(deps, session.member.id, RECENT_CALLS),
    ]);
    const tokens = page.rows;
    const signing = await signingOfTokens(
      deps.db,
      session.member.id,
      tokens.map((token) => token.id),
    );
    const grantable = deps.tiers.scopesOf(session.member.tier);
    const preset = presetAsked(request, grantable);
    const offeredSets = Object.keys(STARTER_SCOPE_SETS).filter((name) => offered(name, grantable));
    return sendPage(
      reply,
      status,
      'Agent console',
      html`<h1>Agent console</h1>${notice ?? ''}
<p>The tokens your agents hold, what each may do, and the way to take it back.</p>
<h2>Your tokens</h2>
${tokens.length ? tokens.map((token) => tokenCard(token, signing.get(token.id), lastSurface(activity, token.prefix), csrf)) : asked.after ? html`<p>No more tokens.</p>` : html`<p>No tokens yet. Approve an agent's code on <a href="/signup-with-agent">the approval page</a>, or mint a token below.</p>`}
${pageLinks(PAGE, asked, page)}
<p class="muted">A token with a bound key can be required to sign its calls (RFC 9421, Ed25519): then the bearer alone is not enough. How to make a key pair and sign a request: <a href="${SIGNING_GUIDE}">the signing guide</a>.</p>
<h2 id="mint">Mint a token</h2>
<h3>In one click</h3>
<div class="actions">${offeredSets.map((name) => presetForm(name, grantable, csrf))}</div>${
        offeredSets.length < Object.keys(STARTER_SCOPE_SETS).length
          ? html`<p class="muted">Not offered, because your tier (${session.member.tier}) does not grant all of their scopes: ${Object.keys(
              STARTER_SCOPE_SETS,
            )
              .filter((name) => !offeredSets.includes(name))
              .map((name) => STARTER_SET_NAMES[name] ?? name)
              .join(', ')}. <a href="/membership">Ask for a higher tier</a>.</p>`
          : ''
      }
${
  offeredSets.length
    ? html`<nav aria-label="Starter sets"><p>Or start from a set and adjust it: ${offeredSets.map(
        (name, i) =>
          html`${i ? ' · ' : ''}<a href="${PAGE}?preset=${name}#mint"${preset?.name === name ? html` aria-current="true"` : ''}>${STARTER_SET_NAMES[name] ?? name}</a>`,
      )}</p></nav>`
    : ''
}
<form method="post" action="${PAGE}/mint">${csrfField(csrf)}
<div class="field"><label for="name">Name</label><input id="name" name="name" required maxlength="${NAME_MAX}"${preset ? html` value="${STARTER_SET_NAMES[preset.name] ?? preset.name}"` : ''}></div>
<fieldset><legend>What it may do (your tier, ${session.member.tier}, grants these)</legend>
${grantable.map((scope) => scopeChoice(scope, preset?.scopes.includes(scope) ?? false))}
</fieldset>
<label class="choice"><input type="checkbox" name="sandbox" value="1"> <span>Sandbox: writes are simulated, nothing changes</span></label>
<div class="actions"><button class="primary" type="submit">Mint</button></div></form>`,
    );
  }

  app.register(async (scope) => {
    acceptFormBodies(scope, deps.config);

    scope.get(PAGE, (request, reply) => render(request, reply, 200));
    registerKeyControls(scope, deps, render, PAGE);

    scope.post(`${PAGE}/mint`, async (request, reply) => {
      if (!hasValidCsrf(request)) return refuseForgery(reply);
      const session = await signedIn(deps, request);
      if (!session) return reply.redirect('/signin', 303);
      const name = (formField(request, 'name') ?? '').trim().slice(0, NAME_MAX);
      const scopes = formList(request, 'scope');
      const { denied } = deps.tiers.split(session.member.tier, scopes);
      if (!name || scopes.length === 0 || denied.length) {
        const problem = denied.length
          ? `Your tier does not grant: ${denied.join(', ')}.`
          : 'Give the token a name and at least one scope.';
        return render(request, reply, 400, html`<p role="alert" class="warning">${problem}</p>`);
      }
      const minted = await mintToken(deps, session.member, {
        name,
        scopes,
        sandbox: formField(request, 'sandbox') === '1',
        source: 'console',
      });
      const snippet = JSON.stringify(mcpInstallRecipe(deps).config_snippet, null, 2);
      return render(
        request,
        reply,
        201,
        html`<section role="status"><h2>Your new token</h2><p>Copy it now: it is shown this once and only its hash is kept.</p>
<pre id="new-token">${minted.plaintext}</pre>
<button type="button" data-copy="new-token">Copy</button>${copyScript()}
<p>MCP client configuration (set <code>AGENT_COMMONS_TOKEN</code> to the token in the client's environment):</p>
<pre>${snippet}</pre></section>`,
      );
    });

    scope.post(`${PAGE}/revoke`, async (request, reply) => {
      if (!hasValidCsrf(request)) return refuseForgery(reply);
      const session = await signedIn(deps, request);
      if (!session) return reply.redirect('/signin', 303);
      const tokenId = formField(request, 'token_id') ?? '';
      if (!(await holdsToken(deps.db, session.member.id, tokenId)))
        return render(request, reply, 404, html`<p role="alert" class="warning">You have no such token.</p>`);
      await revokeToken(deps, tokenId, {
        kind: 'member',
        member_id: session.member.id,
        via: 'console',
      });
      // "My agents" offers the same button: it comes back there (only there, never elsewhere).
      return reply.redirect(formField(request, 'back') === MY_AGENTS ? MY_AGENTS : PAGE, 303);
    });
  });
}
