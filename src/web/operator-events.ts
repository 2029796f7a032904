import type { FastifyInstance } from 'fastify';
import { listEventRequests, type Proposal } from '../domain/events/proposals.ts';
import { backlogOf, memberLabels } from '../domain/operator/overview.ts';
import { adminDecideEventRequest } from '../operations/admin/event-requests.ts';
import type { Deps } from '../operations/services.ts';
import { acceptFormBodies, csrfField, formField, hasValidCsrf } from './forms.ts';
import { html } from './html.ts';
import { answerPage, runFromPage } from './operator-call.ts';
import { operatorNav as nav } from './operator-nav.ts';
import { memberLabel, queueSummary, waitedFor } from './operator-queues.ts';
import { pageLinks, pageRequested } from './paging.ts';
import { refuseForgery, requireOperator, sendPage } from './respond.ts';

const REASON_MAX = 600;
const PAGE = '/operator/event-requests';

/** Member event proposals for operators, oldest first: approve (publish into the upcoming list) or decline. */
/** An ISO time as operators read it elsewhere in the console: `2026-07-16 18:00 UTC` (as sent when it is not a time). */
function readableTime(value: unknown): string {
  const ms = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  return Number.isNaN(ms)
    ? String(value ?? '')
    : `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

export function registerEventProposalReview(app: FastifyInstance, deps: Deps): void {
  app.register(async (scope) => {
    acceptFormBodies(scope, deps.config);

    scope.get(PAGE, async (request, reply) => {
      const who = await requireOperator(deps, request, reply, adminDecideEventRequest);
      if (!who.member) return who.reply;
      const requested = pageRequested(request);
      const [page, backlog] = await Promise.all([
        listEventRequests(deps, 'pending', requested, 'asc'),
        backlogOf(deps, 'event_requests'),
      ]);
      const now = deps.clock.now();
      const labels = await memberLabels(
        deps,
        page.rows.map((row) => row.member_id),
      );
      return sendPage(
        reply,
        200,
        'Event proposals',
        html`${nav(PAGE)}<h1>Event proposals</h1>${queueSummary(backlog, 'proposal', now)}
${page.rows.map((row) => {
  const details = JSON.parse(row.details) as Proposal;
  return html`<article class="card" id="${row.id}"><p class="kicker muted">${details.visibility ?? 'public'} event · proposed by ${memberLabel(labels, row.member_id)} · waiting ${waitedFor(now - Number(row.created_at))}</p>
<h2>${details.title}</h2>
<dl class="facts"><dt>When</dt><dd>${readableTime(details.start)}${details.end ? html` to ${readableTime(details.end)}` : ''}</dd>
${details.location ? html`<dt>Where</dt><dd>${details.location}</dd>` : ''}${details.capacity ? html`<dt>Capacity</dt><dd>${details.capacity} people</dd>` : ''}</dl>
${details.description ? html`<p>${details.description}</p>` : ''}
<form method="post" action="${PAGE}/decide">${csrfField(who.csrf)}<input type="hidden" name="id" value="${row.id}">
<div class="field"><label for="reason-${row.id}">Reason, if you decline (the member sees it)</label><input id="reason-${row.id}" name="reason" maxlength="${REASON_MAX}"></div>
<div class="actions"><button class="primary" type="submit" name="decision" value="approve">Approve and publish</button>
<button class="danger" type="submit" name="decision" value="decline">Decline</button></div></form></article>`;
})}${pageLinks(PAGE, requested, page)}`,
      );
    });

    scope.post(`${PAGE}/decide`, async (request, reply) => {
      if (!hasValidCsrf(request)) return refuseForgery(reply);
      const decision = formField(request, 'decision') === 'approve' ? 'approve' : 'decline';
      const result = await runFromPage(deps, request, adminDecideEventRequest, {
        id: formField(request, 'id') ?? '',
        decision,
        reason: formField(request, 'reason')?.trim().slice(0, REASON_MAX) || undefined,
      });
      return answerPage(reply, result, {
        title: 'Event proposals',
        back: PAGE,
        done: decision === 'approve' ? 'Approved and published.' : 'Declined.',
        failed: 'Not decided',
      });
    });
  });
}
