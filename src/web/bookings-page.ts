import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { MS } from '../clock.ts';
import { bookingsOfDay } from '../domain/resources/bookings.ts';
import { freeSlots, type ResourceListing } from '../domain/resources/resources.ts';
import type { CallResult } from '../operations/pipeline/run.ts';
import { bookResource } from '../operations/resources/book.ts';
import { cancelBookingOperation } from '../operations/resources/cancel.ts';
import { listResources } from '../operations/resources/list.ts';
import type { Deps } from '../operations/services.ts';
import { bookings } from '../storage/bookings.ts';
import { acceptFormBodies, csrfField, csrfToken, formField, hasValidCsrf } from './forms.ts';
import { html, type SafeHtml } from './html.ts';
import { runForPage } from './operator-call.ts';
import { operatorNav } from './operator-nav.ts';
import { isOperatorTier } from './page-viewer.ts';
import { pageLinks, pageRequested } from './paging.ts';
import { operatorsOnly, refuseForgery, sendPage, signedIn } from './respond.ts';

const when = (ms: number) => new Date(ms).toISOString().slice(0, 16).replace('T', ' ');
const clock = (ms: number) => new Date(ms).toISOString().slice(11, 16);
const dayName = (ms: number) =>
  new Date(ms).toLocaleDateString('en-GB', {
    timeZone: 'UTC',
    weekday: 'short',
    day: 'numeric',
    month: 'short',
  });

const STATE_WORDS: Record<string, string> = {
  queued: 'queued: the calendar decides it within a minute or so',
  confirmed: 'confirmed',
  declined: 'declined',
  cancelled: 'cancelled',
};

/**
 * A booking's state in words, with its reason; a reason that names the state ("cancelled by
 * operator") is the state itself, not said twice.
 */
function stateOf(status: string, reason: string | null, words = status): string {
  if (!reason) return words;
  const reasonWords = reason.replaceAll('_', ' ');
  return reason.startsWith(`${status}_`) ? reasonWords : `${words} (${reasonWords})`;
}

function failure(result: CallResult): string {
  const body = result.body as { message?: string; error?: string };
  return body.message ?? body.error ?? 'refused';
}

function cancelForm(csrf: string, id: string, back: string): SafeHtml {
  return html`<form method="post" action="/bookings/cancel">${csrfField(csrf)}<input type="hidden" name="booking_id" value="${id}"><input type="hidden" name="back" value="${back}"><button type="submit" class="danger" aria-label="Cancel booking ${id}">Cancel</button></form>`;
}

/**
 * The member's bookings and their state, the rooms and printers with their free hours and a booking
 * form, and the operator's view of a day's bookings. Booking and cancelling run the registry's
 * bookResource and cancelBooking with the browser's session, as an agent's call runs them.
 */
export function registerBookingsPage(app: FastifyInstance, deps: Deps): void {
  app.register(async (scope) => {
    acceptFormBodies(scope, deps.config);

    scope.get('/bookings', async (request, reply) => {
      const session = await signedIn(deps, request);
      if (!session) return reply.redirect('/signin?next=/bookings', 303);
      const csrf = csrfToken(deps.config, request, reply);
      const asked = pageRequested(request);
      const page = await bookings.pageOfMember(deps.db, session.member.id, asked);
      const rows = page.rows;
      const waiting = rows.some((row) => row.status === 'queued');
      return sendPage(
        reply,
        200,
        'Bookings',
        html`<h1>Your bookings</h1>
<p>Requests your agents (or you) made for rooms and printers. Times are UTC. <a href="/resources">Book a room or printer</a>.</p>
${waiting ? html`<p role="status" id="waiting">Some requests are still queued. <a href="/bookings" id="refresh">Refresh</a> to see the calendar's decision.</p>` : ''}
${
  rows.length
    ? html`<div class="table"><table class="stack"><thead><tr><th>Resource</th><th>From</th><th>To</th><th>Status</th><th>Purpose</th><th><span class="visually-hidden">Actions</span></th></tr></thead><tbody>
${rows.map(
  (row) =>
    html`<tr id="${row.id}" data-status="${row.status}"><td data-label="Resource">${row.name}</td><td data-label="From">${when(Number(row.start_at))}</td><td data-label="To">${when(Number(row.end_at))}</td><td data-label="Status">${stateOf(row.status, row.reason, STATE_WORDS[row.status])}</td><td data-label="Purpose">${row.purpose}</td><td>${
      row.status === 'queued' || row.status === 'confirmed' ? cancelForm(csrf, row.id, '/bookings') : ''
    }</td></tr>`,
)}
</tbody></table></div>`
    : html`<p>No bookings yet.</p>`
}
${pageLinks('/bookings', asked, page)}`,
      );
    });

    async function renderResources(
      request: FastifyRequest,
      reply: FastifyReply,
      status: number,
      notice?: SafeHtml,
    ) {
      const session = await signedIn(deps, request);
      if (!session) return reply.redirect('/signin?next=/resources', 303);
      const listed = await runForPage(deps, request, listResources, {});
      if (listed.status !== 200)
        return sendPage(
          reply,
          listed.status,
          'Rooms and printers',
          html`<h1>Rooms and printers</h1><p role="alert">${failure(listed)}</p>`,
        );
      const csrf = csrfToken(deps.config, request, reply);
      const listing = listed.body as ResourceListing;
      const now = deps.clock.now();
      const today = new Date(now).toISOString().slice(0, 10);
      return sendPage(
        reply,
        status,
        'Rooms and printers',
        html`<h1>Rooms and printers</h1>${notice ?? ''}
<p>Opening hours and free hours of the next 7 days, in UTC. A request is queued and then decided by the calendar: it is confirmed when it fits the opening hours and no confirmed booking overlaps it. See <a href="/bookings">your bookings</a> for its state.</p>
${listing.stale ? html`<p class="warning">The booking queue is behind: decisions may take longer than usual.</p>` : ''}
${listing.resources.map((resource) => {
  const days = freeSlots(resource, now);
  return html`<section class="card" id="resource-${resource.id}" aria-labelledby="name-${resource.id}"><h2 id="name-${resource.id}">${resource.name}</h2>
<p>${resource.kind}, capacity ${resource.capacity}. Open weekdays ${resource.open_hours.weekdays}, weekends ${resource.open_hours.weekends} (UTC).${resource.queued_requests ? html` ${resource.queued_requests === 1 ? 'One request is' : `${resource.queued_requests} requests are`} waiting to be decided.` : ''}</p>
${
  resource.bookable
    ? html`<details open><summary>Free hours, next 7 days</summary><ul>${days.map(
        (d) =>
          html`<li>${dayName(d.day)}: ${d.free.length ? d.free.map((f, i) => html`${i ? ', ' : ''}${clock(f.from)}–${f.to - d.day >= MS.day ? '24:00' : clock(f.to)}`) : 'closed or fully booked'}</li>`,
      )}</ul></details>
<form method="post" action="/resources/book">${csrfField(csrf)}<input type="hidden" name="resource_id" value="${resource.id}">
<fieldset><legend>Book ${resource.name}</legend>
<p class="field"><label for="date-${resource.id}">Day (UTC)</label><input id="date-${resource.id}" name="date" type="date" required min="${today}" value="${today}"></p>
<p class="field"><label for="from-${resource.id}">From (UTC)</label><input id="from-${resource.id}" name="from" type="time" required></p>
<p class="field"><label for="to-${resource.id}">To (UTC)</label><input id="to-${resource.id}" name="to" type="time" required></p>
<p class="field"><label for="purpose-${resource.id}">Purpose (optional)</label><input id="purpose-${resource.id}" name="purpose" maxlength="600"></p>
<button type="submit" class="primary">Request ${resource.name}</button></fieldset></form>`
    : html`<p class="muted">Not bookable at the moment.</p>`
}</section>`;
})}`,
      );
    }

    scope.get('/resources', (request, reply) => renderResources(request, reply, 200));

    scope.post('/resources/book', async (request, reply) => {
      if (!hasValidCsrf(request)) return refuseForgery(reply);
      const date = formField(request, 'date') ?? '';
      const from = formField(request, 'from') ?? '';
      const to = formField(request, 'to') ?? '';
      const instant = (time: string) =>
        /^\d{4}-\d{2}-\d{2}$/.test(date) && /^\d{2}:\d{2}$/.test(time)
          ? `${date}T${time}:00.000Z`
          : undefined;
      // "To 00:00" is the end of the chosen day.
      const end =
        to === '00:00' && instant(to)
          ? new Date(Date.parse(instant(to) as string) + MS.day).toISOString()
          : instant(to);
      if (!instant(from) || !end)
        return renderResources(
          request,
          reply,
          400,
          html`<p role="alert">Give a day and the times from and to.</p>`,
        );
      const result = await runForPage(deps, request, bookResource, {
        resource_id: formField(request, 'resource_id'),
        start_iso: instant(from),
        end_iso: end,
        purpose: formField(request, 'purpose'),
      });
      if (result.status === 401) return reply.redirect('/signin?next=/resources', 303);
      if (result.status >= 400)
        return renderResources(
          request,
          reply,
          result.status,
          html`<p role="alert">Not booked: ${failure(result)}</p>`,
        );
      const body = result.body as { id: string; was_dup: boolean };
      return reply.redirect(`/bookings#${encodeURIComponent(body.id)}`, 303);
    });

    scope.post('/bookings/cancel', async (request, reply) => {
      if (!hasValidCsrf(request)) return refuseForgery(reply);
      const result = await runForPage(deps, request, cancelBookingOperation, {
        booking_id: formField(request, 'booking_id'),
      });
      if (result.status === 401) return reply.redirect('/signin?next=/bookings', 303);
      const back = formField(request, 'back')?.startsWith('/operator/bookings')
        ? (formField(request, 'back') as string)
        : '/bookings';
      if (result.status >= 400)
        return sendPage(
          reply,
          result.status,
          'Not cancelled',
          html`<h1>Not cancelled</h1><p role="alert">${failure(result)}</p><p><a href="${back}">Back</a></p>`,
        );
      return reply.redirect(back, 303);
    });

    scope.get('/operator/bookings', async (request, reply) => {
      const session = await signedIn(deps, request);
      if (!session) return reply.redirect('/signin?next=/operator/bookings', 303);
      if (!isOperatorTier(deps, session.member.tier)) return operatorsOnly(reply, session.member.tier);
      const csrf = csrfToken(deps.config, request, reply);
      const asked = (request.query as Record<string, unknown>).day;
      const parsed =
        typeof asked === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(asked)
          ? Date.parse(`${asked}T00:00:00Z`)
          : NaN;
      const day = Number.isNaN(parsed) ? deps.clock.now() - (deps.clock.now() % MS.day) : parsed;
      const iso = new Date(day).toISOString().slice(0, 10);
      const rows = await bookingsOfDay(deps, day);
      const back = `/operator/bookings?day=${iso}`;
      return sendPage(
        reply,
        200,
        'Bookings of the day',
        html`${operatorNav('/operator/bookings')}<h1>Bookings of ${dayName(day)} ${iso.slice(0, 4)}</h1>
<form method="get" action="/operator/bookings"><p><label for="day">Day (UTC)</label> <input id="day" name="day" type="date" value="${iso}"> <button type="submit">Show</button>
<a href="/operator/bookings?day=${new Date(day - MS.day).toISOString().slice(0, 10)}">Previous day</a> · <a href="/operator/bookings?day=${new Date(day + MS.day).toISOString().slice(0, 10)}">Next day</a></p></form>
${
  rows.length
    ? html`<div class="table"><table id="day-bookings" class="stack"><thead><tr><th>Resource</th><th>From</th><th>To</th><th>Member</th><th>Status</th><th>Purpose</th><th><span class="visually-hidden">Actions</span></th></tr></thead><tbody>
${rows.map(
  (row) =>
    html`<tr id="${row.id}" data-status="${row.status}"><td data-label="Resource">${row.resource_name}</td><td data-label="From">${when(Number(row.start_at))}</td><td data-label="To">${when(Number(row.end_at))}</td><td data-label="Member">${row.member_name ?? row.member_id}</td><td data-label="Status">${stateOf(row.status, row.reason)}</td><td data-label="Purpose">${row.purpose}</td><td>${
      row.status === 'queued' || row.status === 'confirmed' ? cancelForm(csrf, row.id, back) : ''
    }</td></tr>`,
)}</tbody></table></div>`
    : html`<p>No bookings on this day.</p>`
}`,
      );
    });
  });
}
