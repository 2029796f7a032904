import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.ts';
import { decideHighlight, listHighlights } from '../domain/highlights/highlights.ts';
import { listMembers, MemberError, setMemberTier } from '../domain/members/members.ts';
import { recordOperatorAction } from '../domain/members/operator-audit.ts';
import { decideTierRequest, listTierRequests } from '../domain/members/tier-requests.ts';
import { acceptFormBodies, csrfField, formField, hasValidCsrf } from './forms.ts';
import { html } from './html.ts';
import { decisionPage, operatorNav as nav, notice } from './operator-nav.ts';
import { refuseForgery, requireOperator, sendPage } from './respond.ts';

const REASON_MAX = 600;
const PREVIEW_MAX = 400;

/** Tier requests and the highlight queue for operators; every decision is audited (docs/pages.md). */
export function registerOperatorConsole(app: FastifyInstance, deps: Deps): void {
  app.register(async (scope) => {
    acceptFormBodies(scope);

    scope.get('/operator/tier-requests', async (request, reply) => {
      const who = await requireOperator(deps, request, reply, 'admin:tier_review');
      if (!who.member) return who.reply;
      const pending = await listTierRequests(deps, 'pending');
      const tiers = deps.tiers.names();
      return sendPage(
        reply,
        200,
        'Tier requests',
        html`${nav}<h1>Tier requests</h1>${pending.length ? '' : html`<p>No pending requests.</p>`}
${pending.map(
  (
    row,
  ) => html`<article class="op" id="${row.id}"><p><strong>${row.member_id}</strong> asks for <strong>${row.tier}</strong>${row.note ? html`: “${row.note}”` : ''}</p>
<form method="post" action="/operator/tier-requests/decide">${csrfField(who.csrf)}<input type="hidden" name="id" value="${row.id}">
<label>Grant tier <select name="tier">${tiers.map((tier) => html`<option value="${tier}"${tier === row.tier ? html` selected` : ''}>${tier}</option>`)}</select></label>
<button type="submit" name="decision" value="approve">Approve</button>
<label>Reason <input name="reason" maxlength="${REASON_MAX}"></label>
<button type="submit" name="decision" value="deny">Deny</button></form></article>`,
)}`,
      );
    });

    scope.post('/operator/tier-requests/decide', async (request, reply) => {
      if (!hasValidCsrf(request)) return refuseForgery(reply);
      const who = await requireOperator(deps, request, reply, 'admin:tier_review');
      if (!who.member) return who.reply;
      const id = formField(request, 'id') ?? '';
      const approve = formField(request, 'decision') === 'approve';
      const tier = formField(request, 'tier');
      const reason = formField(request, 'reason')?.trim().slice(0, REASON_MAX) || undefined;
      const outcome = await decideTierRequest(
        deps,
        id,
        who.member.id,
        approve ? { decision: 'approve', tier } : { decision: 'deny', reason },
      );
      await recordOperatorAction(deps, {
        operatorId: who.member.id,
        action: approve ? 'tier_request.approve' : 'tier_request.deny',
        target: id,
        outcome,
        detail: approve ? { tier } : { reason },
      });
      return decisionPage(reply, {
        title: 'Tier requests',
        back: '/operator/tier-requests',
        outcome,
        done: 'Decided.',
        failed: 'Not decided',
      });
    });

    scope.get('/operator/members', async (request, reply) => {
      const who = await requireOperator(deps, request, reply, 'admin:tier_review');
      if (!who.member) return who.reply;
      const members = await listMembers(deps.db);
      const tiers = deps.tiers.names();
      return sendPage(
        reply,
        200,
        'Members',
        html`${nav}<h1>Members</h1><table><thead><tr><th>Name</th><th>Email</th><th>Tier</th></tr></thead><tbody>
${members.map(
  (
    member,
  ) => html`<tr id="${member.id}"><td>${member.name}</td><td>${member.email}</td><td><form method="post" action="/operator/members/tier">${csrfField(who.csrf)}<input type="hidden" name="id" value="${member.id}">
<select name="tier" aria-label="Tier of ${member.name}">${tiers.map((tier) => html`<option value="${tier}"${tier === member.tier ? html` selected` : ''}>${tier}</option>`)}</select> <button type="submit">Set</button></form></td></tr>`,
)}
</tbody></table>`,
      );
    });

    scope.post('/operator/members/tier', async (request, reply) => {
      if (!hasValidCsrf(request)) return refuseForgery(reply);
      const who = await requireOperator(deps, request, reply, 'admin:tier_review');
      if (!who.member) return who.reply;
      const id = formField(request, 'id') ?? '';
      const tier = formField(request, 'tier') ?? '';
      let outcome = 'done';
      try {
        await setMemberTier(deps.db, deps.clock, deps.tiers, id, tier);
      } catch (error) {
        if (!(error instanceof MemberError)) throw error;
        outcome = error.message;
      }
      await recordOperatorAction(deps, {
        operatorId: who.member.id,
        action: 'member.set_tier',
        target: id,
        outcome,
        detail: { tier },
      });
      return sendPage(
        reply,
        outcome === 'done' ? 200 : 400,
        'Members',
        html`${nav}${notice(outcome === 'done' ? `Tier set to ${tier}.` : `Not changed: ${outcome}.`)}<p><a href="/operator/members">Back to the list</a></p>`,
      );
    });

    scope.get('/operator/highlights', async (request, reply) => {
      const who = await requireOperator(deps, request, reply, 'admin:highlights_review');
      if (!who.member) return who.reply;
      const pending = await listHighlights(deps, 'pending');
      return sendPage(
        reply,
        200,
        'Highlights',
        html`${nav}<h1>Highlights awaiting moderation</h1>${pending.length ? '' : html`<p>The queue is empty.</p>`}
${pending.map(
  (
    row,
  ) => html`<article class="op" id="${row.id}"><pre>${row.story.slice(0, PREVIEW_MAX)}${row.story.length > PREVIEW_MAX ? '…' : ''}</pre>
<form method="post" action="/operator/highlights/decide">${csrfField(who.csrf)}<input type="hidden" name="id" value="${row.id}">
<button type="submit" name="decision" value="approve">Approve</button> <button type="submit" name="decision" value="reject">Reject</button></form></article>`,
)}`,
      );
    });

    scope.post('/operator/highlights/decide', async (request, reply) => {
      if (!hasValidCsrf(request)) return refuseForgery(reply);
      const who = await requireOperator(deps, request, reply, 'admin:highlights_review');
      if (!who.member) return who.reply;
      const id = formField(request, 'id') ?? '';
      const decision = formField(request, 'decision') === 'approve' ? 'approve' : 'reject';
      const outcome = await decideHighlight(deps, id, decision, who.member.id);
      await recordOperatorAction(deps, {
        operatorId: who.member.id,
        action: `highlight.${decision}`,
        target: id,
        outcome,
      });
      return decisionPage(reply, {
        title: 'Highlights',
        back: '/operator/highlights',
        outcome,
        done: 'Decided.',
        failed: 'Not decided',
      });
    });
  });
}
