import type { FastifyInstance } from 'fastify';
import type { WireEvent } from '../domain/events/events.ts';
import { backlogs } from '../domain/operator/overview.ts';
import { listUpcomingEvents } from '../operations/events/upcoming.ts';
import type { Deps } from '../operations/services.ts';
import { html, type SafeHtml } from './html.ts';
import { runForPage } from './operator-call.ts';
import { queueCards } from './operator-queues.ts';
import { isOperatorTier } from './page-viewer.ts';
import { sendPage, signedIn } from './respond.ts';

/** How many upcoming events the home page shows. */
const NEXT_EVENTS = 3;

function nextEvents(events: readonly WireEvent[]): SafeHtml {
  if (events.length === 0) return html`<p>No events are announced yet.</p>`;
  return html`<ul class="events">${events.map(
    (event) =>
      html`<li><a href="${event.platform_url}">${event.title}</a> <span class="muted">${event.start.slice(0, 16).replace('T', ' ')} UTC${event.location ? html` · ${event.location}` : ''}</span></li>`,
  )}</ul>`;
}

/** The home page: what this is, and for whoever is signed in the way to their pages (operators: the queues). */
export function registerHomePage(app: FastifyInstance, deps: Deps): void {
  const base = deps.config.publicUrl;
  app.get('/', async (request, reply) => {
    const session = await signedIn(deps, request);
    const member = session?.member;
    const operator = member && isOperatorTier(deps, member.tier);
    const [queues, upcoming] = await Promise.all([
      operator ? backlogs(deps) : [],
      // The list agents read (GET /api/events/upcoming), under the same rate limit.
      runForPage(deps, request, listUpcomingEvents, { limit: NEXT_EVENTS }),
    ]);
    const events = upcoming.status === 200 ? ((upcoming.body as { events?: WireEvent[] }).events ?? []) : [];
    const name = deps.config.communityName;
    return sendPage(
      reply,
      200,
      '',
      html`<h1>${name}</h1>
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
<section aria-labelledby="next-events"><h2 id="next-events">Next events</h2>${nextEvents(events)}</section>
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
