import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../core/errors.ts';
import { getProfile, PROFILE_LIMITS, saveProfile } from '../domain/members/directory.ts';
import {
  cancelTierRequest,
  requestTier,
  TIER_NOTE_MAX,
  tierStatus,
} from '../domain/members/tier-requests.ts';
import type { Deps } from '../operations/services.ts';
import { acceptFormBodies, csrfField, csrfToken, formField, hasValidCsrf } from './forms.ts';
import { html, type SafeHtml } from './html.ts';
import { refuseForgery, sendPage, signedIn } from './respond.ts';

const PAGE = '/membership';

/** The member's tier, pending request and history; ask for a higher tier or withdraw the ask (docs/pages.md). */
export function registerMembershipPage(app: FastifyInstance, deps: Deps): void {
  async function render(request: FastifyRequest, reply: FastifyReply, status: number, notice?: SafeHtml) {
    const session = await signedIn(deps, request);
    if (!session) return reply.redirect('/signin', 303);
    const csrf = csrfToken(deps.config, request, reply);
    const current = await tierStatus(deps, session.member.id);
    const requestable = deps.tiers.tiers.filter(
      (tier) => tier.selfRequestable && deps.tiers.isAbove(tier.name, current.tier),
    );
    const pending = current.pending;
    const profile = await getProfile(deps, session.member.id);
    return sendPage(
      reply,
      status,
      'Membership',
      html`<h1>Membership</h1>${notice ?? ''}
<p>Your tier: <strong id="tier">${current.tier}</strong>.</p>
${
  pending
    ? html`<section id="pending"><h2>Pending request</h2><p>Tier <strong>${pending.tier}</strong>, asked ${pending.created_at.slice(0, 16).replace('T', ' ')}${pending.note ? html`: “${pending.note}”` : ''}.</p>
<form method="post" action="${PAGE}/cancel">${csrfField(csrf)}<button type="submit">Withdraw the request</button></form></section>`
    : ''
}
${
  pending
    ? ''
    : requestable.length
      ? html`<h2>Ask for a higher tier</h2><form method="post" action="${PAGE}/request">${csrfField(csrf)}
<p><label for="tier-choice">Tier</label><br><select id="tier-choice" name="tier">${requestable.map((tier) => html`<option value="${tier.name}">${tier.name}</option>`)}</select></p>
<p><label for="note">Note for the operators (optional)</label><br><textarea id="note" name="note" maxlength="${TIER_NOTE_MAX}" rows="3"></textarea></p>
<button type="submit">Send the request</button></form>`
      : html`<p>No higher tier can be requested from here; operators grant the others.</p>`
}
<h2 id="profile">Directory profile</h2>
<form method="post" action="${PAGE}/profile">${csrfField(csrf)}
<fieldset><legend>Who can find you</legend>
<p><label><input type="radio" name="visibility" value="hidden"${profile.visibility === 'hidden' ? html` checked` : ''}> Hidden: never listed in the directory</label><br>
<label><input type="radio" name="visibility" value="members"${profile.visibility === 'members' ? html` checked` : ''}> Listed: members' agents with directory:search can find you</label></p>
<p><label><input type="checkbox" name="show_email" value="1"${profile.showEmail ? html` checked` : ''}> Show my email to callers on tier core and above</label></p>
</fieldset>
<p><label for="bio">About you</label><br><textarea id="bio" name="bio" maxlength="${PROFILE_LIMITS.bio}" rows="3">${profile.bio}</textarea></p>
<p><label for="skills">Skills (comma-separated)</label><br><input id="skills" name="skills" maxlength="${PROFILE_LIMITS.skills}" value="${profile.skills}" size="50"></p>
<p><label for="projects">Projects</label><br><textarea id="projects" name="projects" maxlength="${PROFILE_LIMITS.projects}" rows="2">${profile.projects}</textarea></p>
<button type="submit">Save the profile</button></form>
<h2>History</h2>
${
  current.history.length
    ? html`<table><thead><tr><th>Asked</th><th>Tier</th><th>Outcome</th><th>Reason</th></tr></thead><tbody>
${current.history.map((row) => html`<tr><td>${row.created_at.slice(0, 10)}</td><td>${row.tier}</td><td>${row.status}${row.granted_tier && row.granted_tier !== row.tier ? html` (as ${row.granted_tier})` : ''}</td><td>${row.reason ?? ''}</td></tr>`)}
</tbody></table>`
    : html`<p>No decided requests yet.</p>`
}`,
    );
  }

  app.register(async (scope) => {
    acceptFormBodies(scope, deps.config);
    scope.get(PAGE, (request, reply) => render(request, reply, 200));

    scope.post(`${PAGE}/request`, async (request, reply) => {
      if (!hasValidCsrf(request)) return refuseForgery(reply);
      const session = await signedIn(deps, request);
      if (!session) return reply.redirect('/signin', 303);
      const note = (formField(request, 'note') ?? '').trim().slice(0, TIER_NOTE_MAX) || undefined;
      try {
        await requestTier(deps, session.member.id, formField(request, 'tier') ?? '', note);
      } catch (error) {
        if (!(error instanceof ApiError) || error.status >= 500) throw error;
        return render(
          request,
          reply,
          error.status,
          html`<p role="alert" class="warning">${error.message}</p>`,
        );
      }
      return reply.redirect(PAGE, 303);
    });

    scope.post(`${PAGE}/profile`, async (request, reply) => {
      if (!hasValidCsrf(request)) return refuseForgery(reply);
      const session = await signedIn(deps, request);
      if (!session) return reply.redirect('/signin', 303);
      const visibility = formField(request, 'visibility');
      if (visibility !== 'hidden' && visibility !== 'members')
        return render(
          request,
          reply,
          400,
          html`<p role="alert" class="warning">Choose hidden or listed.</p>`,
        );
      await saveProfile(deps, session.member.id, {
        visibility,
        showEmail: formField(request, 'show_email') === '1',
        bio: (formField(request, 'bio') ?? '').trim(),
        skills: (formField(request, 'skills') ?? '').trim(),
        projects: (formField(request, 'projects') ?? '').trim(),
      });
      return reply.redirect(`${PAGE}#profile`, 303);
    });

    scope.post(`${PAGE}/cancel`, async (request, reply) => {
      if (!hasValidCsrf(request)) return refuseForgery(reply);
      const session = await signedIn(deps, request);
      if (!session) return reply.redirect('/signin', 303);
      await cancelTierRequest(deps, session.member.id);
      return reply.redirect(PAGE, 303);
    });
  });
}
