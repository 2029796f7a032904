import type { FastifyInstance } from 'fastify';
import { listFeedback } from '../domain/feedback/triage.ts';
import { backlogOf } from '../domain/operator/overview.ts';
import { adminResolveFeedback } from '../operations/admin/feedback.ts';
import type { Deps } from '../operations/services.ts';
import { acceptFormBodies, csrfField, formField, hasValidCsrf } from './forms.ts';
import { html } from './html.ts';
import { answerPage, runFromPage } from './operator-call.ts';
import { operatorNav } from './operator-nav.ts';
import { queueSummary, waitedFor } from './operator-queues.ts';
import { pageLinks, pageRequested } from './paging.ts';
import { refuseForgery, requireOperator, sendPage } from './respond.ts';

/** The warnings filed with a ticket (a message that reads like instructions to a model, a short one). */
function warningsOf(stored: string): string[] {
  try {
    const warnings: unknown = JSON.parse(stored);
    return Array.isArray(warnings) ? warnings.filter((item): item is string => typeof item === 'string') : [];
  } catch {
    return [];
  }
}

/** Feedback triage for operators: open tickets, oldest first, and resolving one (its operation, audited). */
export function registerFeedbackTriage(app: FastifyInstance, deps: Deps): void {
  app.register(async (scope) => {
    acceptFormBodies(scope, deps.config);

    scope.get('/operator/feedback', async (request, reply) => {
      const who = await requireOperator(deps, request, reply, adminResolveFeedback);
      if (!who.member) return who.reply;
      const requested = pageRequested(request);
      const [page, backlog] = await Promise.all([
        listFeedback(deps, 'open', requested, 'asc'),
        backlogOf(deps, 'feedback'),
      ]);
      const now = deps.clock.now();
      return sendPage(
        reply,
        200,
        'Feedback',
        html`${operatorNav('/operator/feedback')}<h1>Open feedback</h1>${queueSummary(backlog, 'ticket', now)}
${page.rows.map(
  (
    row,
  ) => html`<article class="card" id="${row.ticket_id}"><p class="muted"><strong>${row.ticket_id}</strong> · ${row.category} · <span class="badge ${row.priority === 'high' ? 'risk-high' : 'risk-low'}">${row.priority} priority</span> · filed ${new Date(Number(row.created_at)).toISOString().slice(0, 16).replace('T', ' ')} UTC, waiting ${waitedFor(now - Number(row.created_at))}</p>
${warningsOf(row.warnings).map((warning) => html`<p class="warning" role="note">${warning}</p>`)}<pre>${row.message}</pre>${row.url ? html`<p>Page: <code class="wrap">${row.url}</code></p>` : ''}${row.expected ? html`<p>Expected: ${row.expected}</p>` : ''}${row.got ? html`<p>Got: ${row.got}</p>` : ''}
<form method="post" action="/operator/feedback/resolve">${csrfField(who.csrf)}<input type="hidden" name="ticket_id" value="${row.ticket_id}"><button class="primary" type="submit" aria-label="Resolve ${row.ticket_id}">Resolve</button></form></article>`,
)}${pageLinks('/operator/feedback', requested, page)}`,
      );
    });

    scope.post('/operator/feedback/resolve', async (request, reply) => {
      if (!hasValidCsrf(request)) return refuseForgery(reply);
      const result = await runFromPage(deps, request, adminResolveFeedback, {
        ticket_id: formField(request, 'ticket_id') ?? '',
      });
      return answerPage(reply, result, {
        title: 'Feedback',
        back: '/operator/feedback',
        done: 'Resolved.',
        failed: 'Not resolved',
      });
    });
  });
}
