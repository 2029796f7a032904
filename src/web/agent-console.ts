import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.ts';
import { listTokens, mintToken, revokeToken } from '../domain/auth/tokens.ts';
import { mcpInstallRecipe } from '../operations/auth/setup-check.ts';
import { acceptFormBodies, csrfField, csrfToken, formField, formList, hasValidCsrf } from './forms.ts';
import { copyScript, html, type SafeHtml } from './html.ts';
import { refuseForgery, sendPage, signedIn } from './respond.ts';

const PAGE = '/agent-console';
const NAME_MAX = 80;

function when(ms: number | null): string {
  return ms === null ? 'never' : new Date(Number(ms)).toISOString().replace('T', ' ').slice(0, 16);
}

/** The member's own tokens: mint (plaintext shown once), list, revoke (docs/pages.md). */
export function registerAgentConsole(app: FastifyInstance, deps: Deps): void {
  async function render(request: FastifyRequest, reply: FastifyReply, status: number, notice?: SafeHtml) {
    const session = await signedIn(deps, request);
    if (!session) return reply.redirect('/signin', 303);
    const csrf = csrfToken(deps.config, request, reply);
    const tokens = await listTokens(deps.db, session.member.id);
    const grantable = deps.tiers.scopesOf(session.member.tier);
    return sendPage(
      reply,
      status,
      'Agent console',
      html`<h1>Agent console</h1>${notice ?? ''}
<h2>Mint a token</h2>
<form method="post" action="${PAGE}/mint">${csrfField(csrf)}
<p><label for="name">Name</label><br><input id="name" name="name" required maxlength="${NAME_MAX}"></p>
<fieldset><legend>Scopes your tier (${session.member.tier}) grants</legend>
${grantable.map((scope) => html`<label><input type="checkbox" name="scope" value="${scope}"> <code>${scope}</code></label><br>`)}
</fieldset>
<p><label><input type="checkbox" name="sandbox" value="1"> Sandbox: writes are simulated, nothing changes</label></p>
<button type="submit">Mint</button></form>
<h2>Your tokens</h2>
<table><thead><tr><th>Token</th><th>Name</th><th>Scopes</th><th>Sandbox</th><th>Created</th><th>Last used</th><th>Via</th><th></th></tr></thead><tbody>
${tokens.map(
  (
    token,
  ) => html`<tr><td><code>${token.prefix}…</code></td><td>${token.name}</td><td>${(JSON.parse(token.scopes) as string[]).join(', ')}</td>
<td>${token.sandbox ? 'yes' : 'no'}</td><td>${when(token.created_at)}</td><td>${when(token.last_used_at)}</td><td>${token.source}</td>
<td>${
    token.revoked_at === null
      ? html`<form method="post" action="${PAGE}/revoke">${csrfField(csrf)}<input type="hidden" name="token_id" value="${token.id}"><button type="submit" aria-label="Revoke ${token.name}">Revoke</button></form>`
      : html`revoked ${when(token.revoked_at)}`
  }</td></tr>`,
)}
</tbody></table>`,
    );
  }

  app.register(async (scope) => {
    acceptFormBodies(scope, deps.config);

    scope.get(PAGE, (request, reply) => render(request, reply, 200));

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
      const minted = await mintToken(deps.db, deps.clock, deps.tiers, session.member, {
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
      const owned = (await listTokens(deps.db, session.member.id)).some((token) => token.id === tokenId);
      if (!owned)
        return render(request, reply, 404, html`<p role="alert" class="warning">You have no such token.</p>`);
      await revokeToken(deps.db, deps.clock, tokenId, {
        kind: 'member',
        member_id: session.member.id,
        via: 'console',
      });
      return reply.redirect(PAGE, 303);
    });
  });
}
