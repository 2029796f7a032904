import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.ts';
import { decideHighlight, listHighlights } from '../domain/highlights/highlights.ts';
import { createMember, listMembers, MemberError, normalizeEmail } from '../domain/members/members.ts';
import { auditedAction } from '../domain/members/operator-audit.ts';
import { changeMemberTier, decideTierRequest, listTierRequests } from '../domain/members/tier-requests.ts';
import { acceptFormBodies, csrfField, formField, hasValidCsrf } from './forms.ts';
import { html } from './html.ts';
import { decisionPage, operatorNav as nav, notice } from './operator-nav.ts';
import { pageLinks, pageRequested } from './paging.ts';
import { refuseForgery, requireOperator, sendPage } from './respond.ts';

const REASON_MAX = 600;
const NAME_MAX = 120;
const PREVIEW_MAX = 400;

/** Tier requests and the highlight queue for operators; every decision is audited (docs/pages.md). */
export function registerOperatorConsole(app: FastifyInstance, deps: Deps): void {
  app.register(async (scope) => {
    acceptFormBodies(scope, deps.config);

    scope.get('/operator/tier-requests', async (request, reply) => {
      const who = await requireOperator(deps, request, reply, 'admin:tier_review');
      if (!who.member) return who.reply;
      const requested = pageRequested(request);
      const page = await listTierRequests(deps, 'pending', requested);
      const pending = page.rows;
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
)}${pageLinks('/operator/tier-requests', requested, page)}`,
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
      const outcome = await auditedAction(
        deps,
        {
          operatorId: who.member.id,
          action: approve ? 'tier_request.approve' : 'tier_request.deny',
          target: id,
          detail: approve ? { tier } : { reason },
        },
        (scoped) =>
          decideTierRequest(
            scoped,
            id,
            who.member.id,
            approve ? { decision: 'approve', tier } : { decision: 'deny', reason },
          ),
      );
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
        html`${nav}<h1>Members</h1>
<h2>Invite a member</h2>
<p>The invited address can then sign in at /signin, also while open sign-up is off.</p>
<form method="post" action="/operator/members/invite">${csrfField(who.csrf)}
<p><label for="invite-name">Name</label><br><input id="invite-name" name="name" required maxlength="${NAME_MAX}"></p>
<p><label for="invite-email">Email</label><br><input id="invite-email" name="email" type="email" required maxlength="254"></p>
<p><label for="invite-tier">Tier</label><br><select id="invite-tier" name="tier">${tiers.map((tier) => html`<option value="${tier}">${tier}</option>`)}</select></p>
<button type="submit">Invite</button></form>
<h2>Everyone</h2>
<table><thead><tr><th>Name</th><th>Email</th><th>Tier</th></tr></thead><tbody>
${members.map(
  (
    member,
  ) => html`<tr id="${member.id}"><td>${member.name}</td><td>${member.email}</td><td><form method="post" action="/operator/members/tier">${csrfField(who.csrf)}<input type="hidden" name="id" value="${member.id}">
<select name="tier" aria-label="Tier of ${member.name}">${tiers.map((tier) => html`<option value="${tier}"${tier === member.tier ? html` selected` : ''}>${tier}</option>`)}</select> <button type="submit">Set</button></form></td></tr>`,
)}
</tbody></table>`,
      );
    });

    scope.post('/operator/members/invite', async (request, reply) => {
      if (!hasValidCsrf(request)) return refuseForgery(reply);
      const who = await requireOperator(deps, request, reply, 'admin:tier_review');
      if (!who.member) return who.reply;
      const typed = formField(request, 'email') ?? '';
      const email = normalizeEmail(typed) ?? typed;
      const name = (formField(request, 'name') ?? '').trim().slice(0, NAME_MAX);
      const tier = formField(request, 'tier') ?? '';
      const outcome = await auditedAction(
        deps,
        { operatorId: who.member.id, action: 'member.invite', target: email, detail: { tier } },
        async (scoped) => {
          if (!name) return 'a name is required';
          try {
            await createMember(scoped.db, deps.clock, deps.tiers, { email, name, tier });
            return 'done';
          } catch (error) {
            if (!(error instanceof MemberError)) throw error;
            return error.message;
          }
        },
      );
      return sendPage(
        reply,
        outcome === 'done' ? 200 : outcome.includes('already exists') ? 409 : 400,
        'Members',
        html`${nav}${notice(outcome === 'done' ? `Invited ${email}: they can sign in now.` : `Not invited: ${outcome}.`)}<p><a href="/operator/members">Back to the list</a></p>`,
      );
    });

    scope.post('/operator/members/tier', async (request, reply) => {
      if (!hasValidCsrf(request)) return refuseForgery(reply);
      const who = await requireOperator(deps, request, reply, 'admin:tier_review');
      if (!who.member) return who.reply;
      const id = formField(request, 'id') ?? '';
      const tier = formField(request, 'tier') ?? '';
      const outcome = await auditedAction(
        deps,
        { operatorId: who.member.id, action: 'member.set_tier', target: id, detail: { tier } },
        (scoped) => changeMemberTier(scoped, id, tier, who.member!.id),
      );
      const changed = outcome === 'done' || outcome === 'unchanged';
      return sendPage(
        reply,
        changed ? 200 : 400,
        'Members',
        html`${nav}${notice(changed ? `Tier set to ${tier}.` : `Not changed: ${outcome}.`)}<p><a href="/operator/members">Back to the list</a></p>`,
      );
    });

    scope.get('/operator/highlights', async (request, reply) => {
      const who = await requireOperator(deps, request, reply, 'admin:highlights_review');
      if (!who.member) return who.reply;
      const requested = pageRequested(request);
      const page = await listHighlights(deps, 'pending', requested);
      const pending = page.rows;
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
)}${pageLinks('/operator/highlights', requested, page)}`,
      );
    });

    scope.post('/operator/highlights/decide', async (request, reply) => {
      if (!hasValidCsrf(request)) return refuseForgery(reply);
      const who = await requireOperator(deps, request, reply, 'admin:highlights_review');
      if (!who.member) return who.reply;
      const id = formField(request, 'id') ?? '';
      const decision = formField(request, 'decision') === 'approve' ? 'approve' : 'reject';
      const outcome = await auditedAction(
        deps,
        { operatorId: who.member.id, action: `highlight.${decision}`, target: id },
        (scoped) => decideHighlight(scoped, id, decision, who.member.id),
      );
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
