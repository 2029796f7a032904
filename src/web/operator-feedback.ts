import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.ts';
import { listFeedback, resolveFeedback } from '../domain/feedback/triage.ts';
import { auditedAction } from '../domain/members/operator-audit.ts';
import { acceptFormBodies, csrfField, formField, hasValidCsrf } from './forms.ts';
import { html } from './html.ts';
import { decisionPage, operatorNav } from './operator-nav.ts';
import { pageLinks, pageRequested } from './paging.ts';
import { refuseForgery, requireOperator, sendPage } from './respond.ts';

/** Feedback triage for operators: open tickets, newest first, and resolving one (audited). */
export function registerFeedbackTriage(app: FastifyInstance, deps: Deps): void {
  app.register(async (scope) => {
    acceptFormBodies(scope, deps.config);

    scope.get('/operator/feedback', async (request, reply) => {
      const who = await requireOperator(deps, request, reply, 'admin:feedback_review');
      if (!who.member) return who.reply;
      const requested = pageRequested(request);
      const page = await listFeedback(deps, 'open', requested);
      const open = page.rows;
      return sendPage(
        reply,
        200,
        'Feedback',
        html`${operatorNav}<h1>Open feedback</h1>${open.length ? '' : html`<p>Nothing open.</p>`}
${open.map(
  (
    row,
  ) => html`<article class="op" id="${row.ticket_id}"><p><strong>${row.ticket_id}</strong> · ${row.category} · ${row.priority} · ${new Date(Number(row.created_at)).toISOString().slice(0, 16).replace('T', ' ')}</p>
<pre>${row.message}</pre>${row.expected ? html`<p>Expected: ${row.expected}</p>` : ''}${row.got ? html`<p>Got: ${row.got}</p>` : ''}
<form method="post" action="/operator/feedback/resolve">${csrfField(who.csrf)}<input type="hidden" name="ticket_id" value="${row.ticket_id}"><button type="submit">Resolve</button></form></article>`,
)}${pageLinks('/operator/feedback', requested, page)}`,
      );
    });

    scope.post('/operator/feedback/resolve', async (request, reply) => {
      if (!hasValidCsrf(request)) return refuseForgery(reply);
      const who = await requireOperator(deps, request, reply, 'admin:feedback_review');
      if (!who.member) return who.reply;
      const ticketId = formField(request, 'ticket_id') ?? '';
      const outcome = await auditedAction(
        deps,
        { operatorId: who.member.id, action: 'feedback.resolve', target: ticketId },
        (scoped) => resolveFeedback(scoped, ticketId),
      );
      return decisionPage(reply, {
        title: 'Feedback',
        back: '/operator/feedback',
        outcome,
        done: 'Resolved.',
        failed: 'Not resolved',
      });
    });
  });
}
