import type { FastifyInstance } from 'fastify';
import { pageMembers } from '../domain/members/members.ts';
import { adminInviteMember, adminSetMemberTier } from '../operations/admin/members.ts';
import type { Deps } from '../operations/services.ts';
import { acceptFormBodies, csrfField, formField, hasValidCsrf } from './forms.ts';
import { html } from './html.ts';
import { answerPage, runFromPage } from './operator-call.ts';
import { operatorNav as nav } from './operator-nav.ts';
import { PAGE_SIZE, pageLinks, pageRequested } from './paging.ts';
import { refuseForgery, requireOperator, sendPage } from './respond.ts';

const NAME_MAX = 120;
const BACK = '/operator/members';

/** The member list for operators: invite a member, set a member's tier (both run their operation). */
export function registerMemberAdmin(app: FastifyInstance, deps: Deps): void {
  app.register(async (scope) => {
    acceptFormBodies(scope, deps.config);

    scope.get('/operator/members', async (request, reply) => {
      const who = await requireOperator(deps, request, reply, adminSetMemberTier);
      if (!who.member) return who.reply;
      const asked = pageRequested(request);
      const page = await pageMembers(deps.db, asked);
      const members = page.rows;
      const tiers = deps.tiers.names();
      return sendPage(
        reply,
        200,
        'Members',
        html`${nav(BACK)}<h1>Members</h1>
<h2>Invite a member</h2>
<p>The invited address can then sign in at /signin, also while open sign-up is off.</p>
<form method="post" action="/operator/members/invite">${csrfField(who.csrf)}
<div class="field"><label for="invite-name">Name</label><input id="invite-name" name="name" required maxlength="${NAME_MAX}"></div>
<div class="field"><label for="invite-email">Email</label><input id="invite-email" name="email" type="email" required maxlength="254"></div>
<div class="field"><label for="invite-tier">Tier</label><select id="invite-tier" name="tier">${tiers.map((tier) => html`<option value="${tier}">${tier}</option>`)}</select></div>
<button class="primary" type="submit">Invite</button></form>
<h2>Everyone</h2>
<p class="muted">Oldest first, ${PAGE_SIZE} at a time.</p>
<div class="table"><table><thead><tr><th>Name</th><th>Email</th><th>Tier</th></tr></thead><tbody>
${members.map(
  (
    member,
  ) => html`<tr id="${member.id}"><td>${member.name}</td><td>${member.email}</td><td><form method="post" action="/operator/members/tier">${csrfField(who.csrf)}<input type="hidden" name="id" value="${member.id}">
<select name="tier" aria-label="Tier of ${member.name}">${tiers.map((tier) => html`<option value="${tier}"${tier === member.tier ? html` selected` : ''}>${tier}</option>`)}</select> <button type="submit" aria-label="Set the tier of ${member.name}">Set</button></form></td></tr>`,
)}
</tbody></table></div>
${pageLinks(BACK, asked, page)}`,
      );
    });

    scope.post('/operator/members/invite', async (request, reply) => {
      if (!hasValidCsrf(request)) return refuseForgery(reply);
      const email = (formField(request, 'email') ?? '').trim();
      const result = await runFromPage(deps, request, adminInviteMember, {
        email,
        name: (formField(request, 'name') ?? '').trim().slice(0, NAME_MAX),
        tier: formField(request, 'tier') || undefined,
      });
      return answerPage(reply, result, {
        title: 'Members',
        back: BACK,
        done: `Invited ${email.toLowerCase()}: they can sign in now.`,
        failed: 'Not invited',
      });
    });

    scope.post('/operator/members/tier', async (request, reply) => {
      if (!hasValidCsrf(request)) return refuseForgery(reply);
      const tier = formField(request, 'tier') ?? '';
      const result = await runFromPage(deps, request, adminSetMemberTier, {
        member_id: formField(request, 'id') ?? '',
        tier,
      });
      return answerPage(reply, result, {
        title: 'Members',
        back: BACK,
        done: `Tier set to ${tier}.`,
        failed: 'Not changed',
      });
    });
  });
}
