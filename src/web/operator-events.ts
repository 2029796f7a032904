import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.ts';
import { decideEventRequest, listEventRequests, type Proposal } from '../domain/events/proposals.ts';
import { auditedAction } from '../domain/members/operator-audit.ts';
import { acceptFormBodies, csrfField, formField, hasValidCsrf } from './forms.ts';
import { html } from './html.ts';
import { decisionPage, operatorNav as nav } from './operator-nav.ts';
import { pageLinks, pageRequested } from './paging.ts';
import { refuseForgery, requireOperator, sendPage } from './respond.ts';

const REASON_MAX = 600;
const PAGE = '/operator/event-requests';

/** Member event proposals for operators: approve (publish into the upcoming list) or decline. */
export function registerEventProposalReview(app: FastifyInstance, deps: Deps): void {
  app.register(async (scope) => {
    acceptFormBodies(scope, deps.config);

    scope.get(PAGE, async (request, reply) => {
      const who = await requireOperator(deps, request, reply, 'admin:events_review');
      if (!who.member) return who.reply;
      const requested = pageRequested(request);
      const page = await listEventRequests(deps, 'pending', requested);
      const pending = page.rows;
      return sendPage(
        reply,
        200,
        'Event proposals',
        html`${nav}<h1>Event proposals</h1>${pending.length ? '' : html`<p>No pending proposals.</p>`}
${pending.map((row) => {
  const details = JSON.parse(row.details) as Proposal;
  return html`<article class="op" id="${row.id}"><h2>${details.title}</h2>
<p>${details.start}${details.end ? html` to ${details.end}` : ''}${details.location ? html` · ${details.location}` : ''}${details.capacity ? html` · ${details.capacity} people` : ''} · ${details.visibility ?? 'public'} · proposed by ${row.member_id}</p>
${details.description ? html`<p>${details.description}</p>` : ''}
<form method="post" action="${PAGE}/decide">${csrfField(who.csrf)}<input type="hidden" name="id" value="${row.id}">
<button type="submit" name="decision" value="approve">Approve and publish</button>
<label>Reason <input name="reason" maxlength="${REASON_MAX}"></label>
<button type="submit" name="decision" value="decline">Decline</button></form></article>`;
})}${pageLinks(PAGE, requested, page)}`,
      );
    });

    scope.post(`${PAGE}/decide`, async (request, reply) => {
      if (!hasValidCsrf(request)) return refuseForgery(reply);
      const who = await requireOperator(deps, request, reply, 'admin:events_review');
      if (!who.member) return who.reply;
      const id = formField(request, 'id') ?? '';
      const decision = formField(request, 'decision') === 'approve' ? 'approve' : 'decline';
      const reason = formField(request, 'reason')?.trim().slice(0, REASON_MAX) || undefined;
      const outcome = await auditedAction(
        deps,
        {
          operatorId: who.member.id,
          action: `event_request.${decision}`,
          target: id,
          detail: reason ? { reason } : {},
        },
        (scoped) => decideEventRequest(scoped, id, decision, who.member.id, reason),
      );
      return decisionPage(reply, {
        title: 'Event proposals',
        back: PAGE,
        outcome,
        done: decision === 'approve' ? 'Approved and published.' : 'Declined.',
        failed: 'Not decided',
      });
    });
  });
}
