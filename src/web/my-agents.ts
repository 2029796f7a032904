import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { apiError } from '../core/errors.ts';
import { type ActivityEntry, type ActivityQuery, activityPage } from '../domain/activity/activity.ts';
import { pageTokens, tokenByPrefix } from '../domain/auth/tokens.ts';
import { type LoggedEvent, latestEvents } from '../domain/eventlog/eventlog.ts';
import { effectsOf } from '../operations/effects.ts';
import { OPERATIONS } from '../operations/registry.ts';
import type { Deps } from '../operations/services.ts';
import { csrfField, csrfToken } from './forms.ts';
import { html, liveScript, type SafeHtml } from './html.ts';
import { PAGE_SIZE } from './paging.ts';
import { sendPage, signedIn } from './respond.ts';

export const MY_AGENTS = '/my-agents';
/** Calls a page of the activity log shows. */
export const ACTIVITY_PAGE_SIZE = 50;
const EVENTS_SHOWN = 20;

const SUMMARY = new Map(OPERATIONS.map((op) => [op.id, op.summary]));
/** The operations that change something: the "Writes" filter (a read is any other). */
const WRITES = OPERATIONS.filter((op) => !effectsOf(op).readOnly).map((op) => op.id);

const KINDS: Record<NonNullable<ActivityQuery['kind']>, string> = {
  read: 'Reads',
  write: 'Writes',
  refused: 'Refused calls',
  sandbox: 'Sandbox calls',
};

const SURFACES: Record<string, string> = { rest: 'REST API', mcp: 'MCP', a2a: 'A2A', web: 'this site' };

const ACTIVITY_ID = /^[0-9a-z]{10,40}$/;

function when(iso: string): string {
  return `${iso.slice(0, 16).replace('T', ' ')} UTC`;
}

type Token = Awaited<ReturnType<typeof pageTokens>>['rows'][number];

interface Filters {
  token: Token | undefined;
  kind: ActivityQuery['kind'];
  before: string | undefined;
}

function filtersOf(request: FastifyRequest, tokens: readonly Token[]): Filters {
  const query = request.query as Record<string, unknown>;
  const token = tokens.find((candidate) => candidate.prefix === query.agent);
  const kind =
    typeof query.kind === 'string' && Object.hasOwn(KINDS, query.kind)
      ? (query.kind as ActivityQuery['kind'])
      : undefined;
  const before =
    typeof query.before === 'string' && ACTIVITY_ID.test(query.before) ? query.before : undefined;
  return { token, kind, before };
}

/** The page's address with these filters (and a cursor, for the next page). */
function addressOf(filters: Filters, before?: string): string {
  const params = new URLSearchParams();
  if (filters.token) params.set('agent', filters.token.prefix);
  if (filters.kind) params.set('kind', filters.kind);
  if (before) params.set('before', before);
  const query = params.toString();
  return query ? `${MY_AGENTS}?${query}` : MY_AGENTS;
}

/** Where a call's target is shown: an event at its own address, a booking in the bookings list. */
function targetLink(target: ActivityEntry['target']): SafeHtml | string {
  if (!target) return '';
  if (target.kind === 'event') {
    const isWeb = /^https?:\/\//.test(target.id) || target.id.startsWith('/');
    return isWeb ? html`<a href="${target.id}">the event</a>` : html`event <code>${target.id}</code>`;
  }
  if (target.kind === 'booking')
    return html`<a href="/bookings#${target.id}">booking <code>${target.id}</code></a>`;
  if (target.kind === 'highlight') return html`<a href="/highlights">highlight <code>${target.id}</code></a>`;
  return html`${target.kind} <code>${target.id}</code>`;
}

function outcomeCell(entry: ActivityEntry): SafeHtml {
  if (entry.outcome === 'sandbox')
    return html`<span class="badge state-sandbox">Sandbox</span> simulated, nothing changed`;
  if (entry.status < 400) return html`<span class="badge state-active">Done</span>`;
  return html`<span class="badge state-revoked">Refused</span> ${entry.outcome.replaceAll('_', ' ')} (${entry.status})`;
}

function activityRow(entry: ActivityEntry, names: ReadonlyMap<string, string>): SafeHtml {
  const agent = names.get(entry.token_prefix);
  return html`<tr id="call-${entry.id}"${entry.outcome === 'sandbox' ? html` class="sandbox"` : ''}><td data-label="When">${when(entry.at)}</td><td data-label="Agent">${agent ?? ''} <code>${entry.token_prefix}…</code></td><td data-label="What">${SUMMARY.get(entry.operation) ?? entry.operation}</td><td data-label="Over">${SURFACES[entry.surface] ?? entry.surface}</td><td data-label="Outcome">${outcomeCell(entry)}</td><td data-label="Touched">${targetLink(entry.target)}</td></tr>`;
}

/** An event log record's target, linked where the site shows it. */
function recordTarget(record: LoggedEvent): SafeHtml | string {
  const target = record.target as Record<string, unknown>;
  if (typeof target.booking_id === 'string') return targetLink({ kind: 'booking', id: target.booking_id });
  if (typeof target.event_url === 'string') return targetLink({ kind: 'event', id: target.event_url });
  if (typeof target.story_id === 'string') return targetLink({ kind: 'highlight', id: target.story_id });
  if (typeof target.token_prefix === 'string') return html`token <code>${target.token_prefix}…</code>`;
  if (typeof target.request_id === 'string') return html`<a href="/membership">your request</a>`;
  return '';
}

function recordRow(record: LoggedEvent): SafeHtml {
  return html`<tr><td data-label="When">${when(record.at)}</td><td data-label="What happened">${record.type.replaceAll('_', ' ')}</td><td data-label="About">${recordTarget(record)}</td></tr>`;
}

function tokenCard(token: Token, csrf: string, filters: Filters): SafeHtml {
  const live = token.revoked_at === null;
  const state = live
    ? html`<span class="badge state-active">Active</span>${token.sandbox ? html` <span class="badge state-sandbox">Sandbox</span>` : ''}`
    : html`<span class="badge state-revoked">Revoked</span>`;
  const scopes = JSON.parse(token.scopes) as string[];
  return html`<li class="card" id="agent-${token.id}"><h3>${token.name} ${state}</h3>
<p><code>${token.prefix}…</code> · ${scopes.length} scope${scopes.length === 1 ? '' : 's'} · <a href="${addressOf({ ...filters, token, before: undefined })}#activity">Its activity<span class="visually-hidden"> (${token.name})</span></a></p>
${
  live
    ? html`<details class="confirm"><summary>Revoke ${token.name}…</summary><p>The agent using it is refused from its next call. This cannot be undone.</p>
<form method="post" action="/agent-console/revoke">${csrfField(csrf)}<input type="hidden" name="token_id" value="${token.id}"><input type="hidden" name="back" value="${MY_AGENTS}"><button class="danger primary" type="submit" aria-label="Revoke ${token.name}">Yes, revoke it</button></form></details>`
    : ''
}</li>`;
}

function filterForm(tokens: readonly Token[], filters: Filters): SafeHtml {
  return html`<form method="get" action="${MY_AGENTS}#activity" class="filters" aria-label="Filter the activity">
<div class="field"><label for="agent">Agent</label><select id="agent" name="agent"><option value="">All agents</option>${tokens.map(
    (token) =>
      html`<option value="${token.prefix}"${filters.token?.id === token.id ? html` selected` : ''}>${token.name} (${token.prefix}…)</option>`,
  )}</select></div>
<div class="field"><label for="kind">Kind</label><select id="kind" name="kind"><option value="">Every call</option>${Object.entries(
    KINDS,
  ).map(
    ([value, label]) =>
      html`<option value="${value}"${filters.kind === value ? html` selected` : ''}>${label}</option>`,
  )}</select></div>
<div class="actions"><button type="submit">Show</button>${filters.token || filters.kind ? html` <a href="${MY_AGENTS}#activity">Clear the filters</a>` : ''}</div></form>`;
}

/** The newest activity id and event log id the member has: what the live script compares. */
async function heads(deps: Deps, memberId: string) {
  const [newest] = (await activityPage(deps, memberId, { writes: WRITES, limit: 1 })).entries;
  const [record] = await latestEvents(deps.db, memberId, 1);
  return { activity: newest?.id ?? '', events: record ? String(record.id) : '' };
}

/**
 * "My agents": the member's tokens with revoke beside each (the agent console's revoke), what each
 * did (the activity log, filtered by agent and kind, 50 calls a page by keyset on the time-sorted
 * id), and the member's event log. The first page keeps itself current with /assets/live.js
 * (docs/pages.md).
 */
export function registerMyAgentsPage(app: FastifyInstance, deps: Deps): void {
  async function render(request: FastifyRequest, reply: FastifyReply) {
    const session = await signedIn(deps, request);
    if (!session) return reply.redirect(`/signin?next=${MY_AGENTS}`, 303);
    const memberId = session.member.id;
    const csrf = csrfToken(deps.config, request, reply);
    // The newest agents, at most a page of them (the agent console pages through every token); an
    // agent filtered on but older than those is looked up by its prefix.
    const listed = await pageTokens(deps.db, memberId, { limit: PAGE_SIZE });
    const asked = (request.query as Record<string, unknown>).agent;
    const extra =
      typeof asked === 'string' && asked && !listed.rows.some((token) => token.prefix === asked)
        ? await tokenByPrefix(deps.db, memberId, asked)
        : undefined;
    const tokens = extra ? [...listed.rows, extra] : listed.rows;
    const filters = filtersOf(request, tokens);
    const [page, records, head] = await Promise.all([
      activityPage(deps, memberId, {
        tokenPrefix: filters.token?.prefix,
        kind: filters.kind,
        writes: WRITES,
        before: filters.before,
        limit: ACTIVITY_PAGE_SIZE,
      }),
      latestEvents(deps.db, memberId, EVENTS_SHOWN),
      heads(deps, memberId),
    ]);
    const names = new Map(tokens.map((token) => [token.prefix, token.name]));
    const live = filters.before === undefined;
    const paging =
      filters.before || page.next
        ? html`<nav class="pages" aria-label="Activity pages">${filters.before ? html`<a href="${addressOf(filters)}#activity">Newest calls</a>` : ''}${page.next ? html`<a href="${addressOf(filters, page.next)}#activity" rel="next">Older calls</a>` : ''}</nav>`
        : '';
    return sendPage(
      reply,
      200,
      'My agents',
      html`<h1>My agents</h1>
<p>The agents acting for you, what each did, and the way to stop one. Times are UTC.${live ? ' This page updates itself as your agents work.' : ''}</p>
<p id="live-status" class="muted" aria-live="polite"></p>
<section aria-labelledby="agents-heading"><h2 id="agents-heading">Your agents</h2>
${
  tokens.length
    ? html`<ul class="grid agents">${tokens.map((token) => tokenCard(token, csrf, filters))}</ul>`
    : html`<p>No agents yet. Approve an agent's code on <a href="/signup-with-agent">the approval page</a>, or mint a token on <a href="/agent-console">the agent console</a>.</p>`
}
${listed.next ? html`<p>The newest ${PAGE_SIZE} are shown: <a href="/agent-console">every token, page by page, on the agent console</a>.</p>` : ''}
<p><a href="/agent-console">Agent console</a>: scopes, signing keys and new tokens.</p></section>
<section id="activity" aria-labelledby="activity-heading"${live ? html` data-live="${MY_AGENTS}/heads" data-live-activity="${head.activity}" data-live-events="${head.events}"` : ''}><h2 id="activity-heading">What they did</h2>
${filterForm(tokens, filters)}
<div id="activity-log" data-live-region>${
        page.entries.length
          ? html`<div class="table" tabindex="0" role="region" aria-label="Calls your agents made"><table class="stack"><thead><tr><th scope="col">When</th><th scope="col">Agent</th><th scope="col">What</th><th scope="col">Over</th><th scope="col">Outcome</th><th scope="col">Touched</th></tr></thead><tbody>
${page.entries.map((entry) => activityRow(entry, names))}
</tbody></table></div>`
          : html`<p>No calls${filters.token || filters.kind ? ' match these filters' : ' yet'}.</p>`
      }</div>
${paging}</section>
<section aria-labelledby="events-heading"><h2 id="events-heading">Your event log</h2>
<p class="muted">What happened as a result: confirmations, decisions, tokens made and revoked (the latest ${EVENTS_SHOWN}).</p>
<div id="event-log" data-live-region>${
        records.length
          ? html`<div class="table" tabindex="0" role="region" aria-label="Your event log"><table class="stack"><thead><tr><th scope="col">When</th><th scope="col">What happened</th><th scope="col">About</th></tr></thead><tbody>
${records.map(recordRow)}
</tbody></table></div>`
          : html`<p>Nothing yet.</p>`
      }</div></section>
<section aria-labelledby="account-heading"><h2 id="account-heading">Your account</h2>
<p>You are signed in as <strong>${session.member.name}</strong> (${session.member.email}), tier <strong>${session.member.tier}</strong>: <a href="/membership">Membership</a>.</p>
<form method="post" action="/signout">${csrfField(csrf)}<button type="submit">Sign out</button></form></section>
${live ? liveScript() : ''}`,
    );
  }

  app.get(MY_AGENTS, render);
  // What the live script polls: two ids, so a page is fetched again only when something is new.
  app.get(`${MY_AGENTS}/heads`, async (request, reply) => {
    const session = await signedIn(deps, request);
    reply.header('cache-control', 'no-store');
    if (!session) return reply.code(401).send(apiError('session_required').body(request.id));
    return reply.send(await heads(deps, session.member.id));
  });
}
