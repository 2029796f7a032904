import type { FastifyInstance } from 'fastify';
import { listHighlights } from '../domain/highlights/highlights.ts';
import { listTierRequests } from '../domain/members/tier-requests.ts';
import { backlogOf, memberLabels } from '../domain/operator/overview.ts';
import { adminDecideHighlight } from '../operations/admin/highlights.ts';
import { adminDecideTierRequest } from '../operations/admin/tier-requests.ts';
import type { Deps } from '../operations/services.ts';
import { acceptFormBodies, csrfField, formField, hasValidCsrf } from './forms.ts';
import { parseStory, storyCard } from './highlight-story.ts';
import { html } from './html.ts';
import { answerPage, runFromPage } from './operator-call.ts';
import { registerOperatorLanding } from './operator-landing.ts';
import { registerMemberAdmin } from './operator-members.ts';
import { operatorNav as nav } from './operator-nav.ts';
import { memberLabel, queueSummary, waitedFor } from './operator-queues.ts';
import { pageLinks, pageRequested } from './paging.ts';
import { refuseForgery, requireOperator, sendPage } from './respond.ts';

const REASON_MAX = 600;

/**
 * Tier requests and the highlight queue for operators (docs/pages.md), oldest first, with how many
 * wait. Each decision runs the operation an agent's tool runs (operator-call.ts), so it is
 * authorized, counted and audited there.
 */
export function registerOperatorConsole(app: FastifyInstance, deps: Deps): void {
  registerMemberAdmin(app, deps);
  registerOperatorLanding(app, deps);
  app.register(async (scope) => {
    acceptFormBodies(scope, deps.config);

    scope.get('/operator/tier-requests', async (request, reply) => {
      const who = await requireOperator(deps, request, reply, adminDecideTierRequest);
      if (!who.member) return who.reply;
      const requested = pageRequested(request);
      const [page, backlog] = await Promise.all([
        listTierRequests(deps, 'pending', requested),
        backlogOf(deps, 'tier_requests'),
      ]);
      const tiers = deps.tiers.names();
      const now = deps.clock.now();
      const labels = await memberLabels(
        deps,
        page.rows.map((row) => row.member_id),
      );
      return sendPage(
        reply,
        200,
        'Tier requests',
        html`${nav('/operator/tier-requests')}<h1>Tier requests</h1>${queueSummary(backlog, 'request', now)}
${page.rows.map(
  (
    row,
  ) => html`<article class="card" id="${row.id}"><h2>${memberLabel(labels, row.member_id)} asks for <strong>${row.tier}</strong></h2>
<p class="muted">Waiting ${waitedFor(now - Number(row.created_at))}</p>${row.note ? html`<blockquote><p>“${row.note}”</p></blockquote>` : ''}
<form method="post" action="/operator/tier-requests/decide">${csrfField(who.csrf)}<input type="hidden" name="id" value="${row.id}">
<div class="field"><label for="tier-${row.id}">Grant tier</label><select id="tier-${row.id}" name="tier">${tiers.map((tier) => html`<option value="${tier}"${tier === row.tier ? html` selected` : ''}>${tier}</option>`)}</select></div>
<div class="field"><label for="reason-${row.id}">Reason, if you deny (the member sees it)</label><input id="reason-${row.id}" name="reason" maxlength="${REASON_MAX}"></div>
<div class="actions"><button class="primary" type="submit" name="decision" value="approve">Approve</button>
<button class="danger" type="submit" name="decision" value="deny">Deny</button></div></form></article>`,
)}${pageLinks('/operator/tier-requests', requested, page)}`,
      );
    });

    scope.post('/operator/tier-requests/decide', async (request, reply) => {
      if (!hasValidCsrf(request)) return refuseForgery(reply);
      const approve = formField(request, 'decision') === 'approve';
      const reason = formField(request, 'reason')?.trim().slice(0, REASON_MAX) || undefined;
      const result = await runFromPage(deps, request, adminDecideTierRequest, {
        id: formField(request, 'id') ?? '',
        ...(approve
          ? { decision: 'approve', tier: formField(request, 'tier') }
          : { decision: 'deny', reason }),
      });
      return answerPage(reply, result, {
        title: 'Tier requests',
        back: '/operator/tier-requests',
        done: 'Decided.',
        failed: 'Not decided',
      });
    });

    scope.get('/operator/highlights', async (request, reply) => {
      const who = await requireOperator(deps, request, reply, adminDecideHighlight);
      if (!who.member) return who.reply;
      const requested = pageRequested(request);
      const [page, backlog] = await Promise.all([
        listHighlights(deps, 'pending', requested, 'asc'),
        backlogOf(deps, 'highlights'),
      ]);
      const now = deps.clock.now();
      const labels = await memberLabels(
        deps,
        page.rows.map((row) => row.member_id),
      );
      return sendPage(
        reply,
        200,
        'Highlights',
        html`${nav('/operator/highlights')}<h1>Highlights awaiting moderation</h1>${queueSummary(backlog, 'story', now)}
<p class="muted">Each story is shown as the community will see it once approved, on <a href="/highlights">the highlights page</a>.</p>
${page.rows.map(
  (row) => html`<section class="card" id="${row.id}" aria-label="Story ${row.id}">
${storyCard(parseStory(row.story), { forModerator: true, headingLevel: 2 })}
<p class="muted">Story id <code>${row.id}</code> · sent for ${memberLabel(labels, row.member_id)} · waiting ${waitedFor(now - Number(row.submitted_at))} · leaves the queue unreviewed in ${waitedFor(Math.max(0, Number(row.expires_at) - now))}</p>
<form method="post" action="/operator/highlights/decide">${csrfField(who.csrf)}<input type="hidden" name="id" value="${row.id}">
<div class="actions"><button class="primary" type="submit" name="decision" value="approve">Approve</button> <button class="danger" type="submit" name="decision" value="reject">Reject</button></div></form></section>`,
)}${pageLinks('/operator/highlights', requested, page)}`,
      );
    });

    scope.post('/operator/highlights/decide', async (request, reply) => {
      if (!hasValidCsrf(request)) return refuseForgery(reply);
      const result = await runFromPage(deps, request, adminDecideHighlight, {
        id: formField(request, 'id') ?? '',
        decision: formField(request, 'decision') === 'approve' ? 'approve' : 'reject',
      });
      return answerPage(reply, result, {
        title: 'Highlights',
        back: '/operator/highlights',
        done: 'Decided.',
        failed: 'Not decided',
      });
    });
  });
}
