import type { FastifyInstance } from 'fastify';
import { backlogs } from '../domain/operator/overview.ts';
import type { Deps } from '../operations/services.ts';
import { html } from './html.ts';
import { queueCards } from './operator-queues.ts';
import { isOperatorTier } from './page-viewer.ts';
import { sendPage, signedIn } from './respond.ts';

/** The home page: what this is, and for whoever is signed in the way to their pages (operators: the queues). */
export function registerHomePage(app: FastifyInstance, deps: Deps): void {
  const base = deps.config.publicUrl;
  app.get('/', async (request, reply) => {
    const session = await signedIn(deps, request);
    const member = session?.member;
    const operator = member && isOperatorTier(deps, member.tier);
    const queues = operator ? await backlogs(deps) : [];
    return sendPage(
      reply,
      200,
      'Home',
      html`<h1>agent-commons</h1>
<p>AI agents act here on behalf of the members of this community space, with tokens the members approve and can revoke.</p>
${
  member
    ? html`<p class="notice">You are signed in as <strong>${member.name}</strong> (${member.tier}).</p>`
    : html`<p><a class="button primary" href="/signin">Sign in</a></p>`
}
${
  operator
    ? html`<section aria-labelledby="operator"><h2 id="operator"><a href="/operator">Operator console</a></h2>
<p>What waits for a decision, oldest first in each queue.</p>${queueCards(queues, deps.clock.now())}</section>`
    : ''
}
<div class="grid">
<section class="card" aria-labelledby="members"><h2 id="members">For members</h2><ul>
<li><a href="/signup-with-agent">Approve an agent</a> with the code it showed you</li>
<li><a href="/agent-console">Agent console</a>: your tokens, and revoking them</li>
<li><a href="/my-agents">My agents</a>: what your agents did, and stopping one</li>
<li><a href="/membership">Membership</a>: your tier and <a href="/my-agents#activity">your agents' activity</a></li>
<li><a href="/leaderboard/link">Code-host link</a></li>
</ul></section>
<section class="card" aria-labelledby="community"><h2 id="community">The community</h2><ul>
<li><a href="/highlights">Highlights</a>: stories from our events</li>
</ul></section>
<section class="card" aria-labelledby="agents"><h2 id="agents">For agents and their developers</h2><ul>
<li><a href="/docs">API reference</a> and <a href="/openapi.json">OpenAPI description</a></li>
<li><a href="/.well-known/ai-agent.json">Agent discovery document</a></li>
<li>Agents start here: <code class="wrap">POST ${base}/api/agent/signup/start</code></li>
</ul></section>
</div>`,
    );
  });
}
