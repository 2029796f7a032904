import type { FastifyInstance, FastifyReply } from 'fastify';
import { counterKey, type RatePolicy, windowBounds } from '../core/rate-limit.ts';
import {
  approveGrant,
  bindGrantToSession,
  denyGrant,
  reviewableGrant,
} from '../domain/auth/device-grants.ts';
import { rateKeyForIp } from '../http/client.ts';
import type { Deps } from '../operations/services.ts';
import { normalizeUserCode } from '../secrets.ts';
import type { DeviceGrantsTable } from '../storage/schema.ts';
import { acceptFormBodies, csrfField, csrfToken, formField, hasValidCsrf } from './forms.ts';
import { html } from './html.ts';
import { refuseForgery, sendPage, signedIn } from './respond.ts';
import { grantCard, scopeList } from './scope-words.ts';

const PAGE = '/signup-with-agent';
/** Code entries a minute, per member and per IP: enough for typos, far too few to guess codes. */
function codeEntryPolicies(deps: Deps): RatePolicy[] {
  const limit = deps.config.limits.codeEntriesPerMinute;
  return [
    { name: 'code_entry_member', limit, window: 60, per: 'member' },
    { name: 'code_entry_ip', limit, window: 60, per: 'ip' },
  ];
}

function age(ms: number): string {
  const minutes = Math.floor(ms / 60_000);
  return minutes < 1 ? 'less than a minute ago' : `${minutes} minute${minutes === 1 ? '' : 's'} ago`;
}

/** The approval page an agent's user sends a member to (docs/pages.md). */
export function registerDeviceApprovalPages(app: FastifyInstance, deps: Deps): void {
  const policies = codeEntryPolicies(deps);
  async function tooManyEntries(memberId: string, ip: string): Promise<boolean> {
    const now = deps.clock.now();
    const counts = await Promise.all(
      policies.map((policy) =>
        deps.windowCounters.hit(
          counterKey(policy, policy.per === 'ip' ? ip : memberId, now),
          windowBounds(policy, now).end,
          now,
        ),
      ),
    );
    return counts.some((count, i) => count > policies[i].limit);
  }

  function review(reply: FastifyReply, csrf: string, code: string, grant: DeviceGrantsTable, tier: string) {
    const requested = JSON.parse(grant.scopes) as string[];
    const { granted, denied } = deps.tiers.split(tier, requested);
    return sendPage(
      reply,
      200,
      'Approve an agent',
      html`<h1>An agent asks to act for you in ${deps.config.communityName}</h1>
<p class="warning"><strong>Approve only if you started this yourself just now.</strong> Someone may have sent you this code to get a token in your name.</p>
<section class="card" aria-labelledby="who"><h2 id="who">Who is asking</h2>
<dl class="facts">
<dt>Agent</dt><dd><strong>${grant.client_name ?? 'unnamed client'}</strong> <span class="badge risk-medium">unverified: the agent chose this name</span></dd>
<dt>From</dt><dd>IP ${grant.ip ?? 'unknown'}, ${grant.user_agent ?? 'unknown software'}</dd>
<dt>Code</dt><dd><strong><code class="user-code">${normalizeUserCode(code)}</code></strong>: check that your agent shows this same code</dd>
<dt>Asked</dt><dd>${age(deps.clock.now() - Number(grant.created_at))}</dd>
</dl></section>
${grantCard(granted, denied, tier)}
<section class="card" aria-labelledby="mode"><h2 id="mode">${grant.sandbox ? 'Sandbox: nothing real happens' : 'Real: it acts for you'}</h2>
<p id="sandbox">${
        grant.sandbox
          ? 'Sandbox: its writes are simulated and nothing changes, while its reads are real.'
          : 'Not a sandbox: what it does is done in your name, as if you did it.'
      } You can revoke it at any time on the <a href="/agent-console">agent console</a>.</p></section>
<form method="post" action="${PAGE}/decide">${csrfField(csrf)}<input type="hidden" name="code" value="${code}">
<div class="actions"><button class="primary" type="submit" name="decision" value="approve">Approve</button>
<button class="danger" type="submit" name="decision" value="deny">Deny</button></div></form>`,
    );
  }

  const refusals = {
    unknown: [404, 'No pending request has this code. Check it and try again.'],
    expired: [410, 'This code has expired. The agent has to start again.'],
    decided: [409, 'This request was already decided.'],
    bound_elsewhere: [403, 'This code was entered in another session. Only that session can decide it.'],
    no_member: [403, 'Your account is gone.'],
    too_many: [429, 'Too many codes entered. Wait a minute and try again.'],
  } as const;
  const refuse = (reply: FastifyReply, reason: keyof typeof refusals) => {
    const [status, message] = refusals[reason];
    return sendPage(
      reply,
      status,
      'Approve an agent',
      html`<h1>Cannot continue</h1><p>${message}</p><p><a href="${PAGE}">Enter a code</a></p>`,
    );
  };

  app.register(async (scope) => {
    acceptFormBodies(scope, deps.config);

    scope.get(PAGE, async (request, reply) => {
      const csrf = csrfToken(deps.config, request, reply);
      const session = await signedIn(deps, request);
      const query = request.query as Record<string, unknown>;
      const code = typeof query.code === 'string' ? query.code.slice(0, 20) : '';
      if (!session) {
        return sendPage(
          reply,
          200,
          'Approve an agent',
          html`<h1>Sign in first</h1><p><a href="/signin?next=${encodeURIComponent(request.url)}">Sign in</a>; you come back here afterwards to ${code ? 'see what the agent asks for and decide' : "enter the agent's code"}.</p>`,
        );
      }
      // The agent's link carries its code: straight to what it asks for, with Approve the one step
      // left. Looked up as an entry (counted), bound only by the decision's POST.
      if (code) {
        if (await tooManyEntries(session.member.id, rateKeyForIp(request.ip)))
          return refuse(reply, 'too_many');
        const found = await reviewableGrant(deps, code, session.sessionHash);
        if (!found.ok) return refuse(reply, found.reason);
        return review(reply, csrf, code, found.grant, session.member.tier);
      }
      return sendPage(
        reply,
        200,
        'Approve an agent',
        html`<h1>Approve an agent</h1><p>Signed in as ${session.member.name}. Enter the code the agent showed you.</p>
<form method="post" action="${PAGE}">${csrfField(csrf)}
<div class="field"><label for="code">Code (XXXX-XXXX)</label>
<input id="code" name="code" value="${code}" required maxlength="20" autocomplete="off" autocapitalize="characters"></div>
<button class="primary" type="submit">Continue</button></form>`,
      );
    });

    scope.post(PAGE, async (request, reply) => {
      if (!hasValidCsrf(request)) return refuseForgery(reply);
      const session = await signedIn(deps, request);
      if (!session) return reply.redirect('/signin', 303);
      if (await tooManyEntries(session.member.id, rateKeyForIp(request.ip))) return refuse(reply, 'too_many');
      const code = (formField(request, 'code') ?? '').slice(0, 20);
      const bound = await bindGrantToSession(deps, code, session.sessionHash);
      if (!bound.ok) return refuse(reply, bound.reason);
      return review(reply, csrfToken(deps.config, request, reply), code, bound.grant, session.member.tier);
    });

    scope.post(`${PAGE}/decide`, async (request, reply) => {
      if (!hasValidCsrf(request)) return refuseForgery(reply);
      const session = await signedIn(deps, request);
      if (!session) return reply.redirect('/signin', 303);
      const code = (formField(request, 'code') ?? '').slice(0, 20);
      const bound = await bindGrantToSession(deps, code, session.sessionHash);
      if (!bound.ok) return refuse(reply, bound.reason);
      const approve = formField(request, 'decision') === 'approve';
      const result = approve
        ? await approveGrant(deps, code, session.member.id)
        : await denyGrant(deps, code, session.member.id);
      if (!result.ok) return refuse(reply, result.reason);
      return sendPage(
        reply,
        200,
        approve ? 'Agent approved' : 'Agent denied',
        approve
          ? html`<h1>Approved</h1><p role="status">The agent receives its token on its next poll, once.</p><h2>It can now</h2>${result.granted.length ? scopeList('granted', result.granted) : html`<p>Nothing: no scopes were granted.</p>`}<p>Changed your mind? Revoke it on the <a href="/agent-console">agent console</a>.</p>`
          : html`<h1>Denied</h1><p role="status">The agent is told the request was cancelled. It got nothing.</p>`,
      );
    });
  });
}
