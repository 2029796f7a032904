import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { findEventById, findEventByUrl, upcomingEventRows } from '../domain/events/events.ts';
import { proposersOf, publishedEventUrl } from '../domain/events/proposals.ts';
import { latestRsvp } from '../domain/events/rsvps.ts';
import { getEventCalendar } from '../operations/events/calendar.ts';
import { requestEvent } from '../operations/events/request.ts';
import { rsvpToEvent } from '../operations/events/rsvp.ts';
import { cancelRsvpToEvent } from '../operations/events/rsvp-cancel.ts';
import type { CallResult } from '../operations/pipeline/run.ts';
import type { Deps } from '../operations/services.ts';
import type { EventsTable } from '../storage/schema.ts';
import { acceptFormBodies, csrfField, csrfToken, formField, hasValidCsrf } from './forms.ts';
import { html, type SafeHtml } from './html.ts';
import { runForPage } from './operator-call.ts';
import { refuseForgery, sendPage, signedIn } from './respond.ts';
import { instantOfLocal, isZone, timeRangeIn, zoneOf, zoneQuery, zoneSelect } from './time-zone.ts';

const ID = /^[A-Za-z0-9_-]{1,80}$/;

/**
 * An event by its page's id: a member event an operator approved is published at
 * `/events/<request id>` (its canonical URL); an event of the platform's feed has its page at
 * `/events/<event id>`.
 */
async function eventOfPage(deps: Deps, id: string): Promise<EventsTable | undefined> {
  if (!ID.test(id)) return undefined;
  return (await findEventByUrl(deps.db, publishedEventUrl(deps, id))) ?? findEventById(deps.db, id);
}

/** The page's address of an event: its published URL's path for a member event, else by its id. */
function pathOf(deps: Deps, row: EventsTable): string {
  const local = `${deps.config.publicUrl}/events/`;
  return row.platform_url.startsWith(local)
    ? `/events/${row.platform_url.slice(local.length)}`
    : `/events/${row.id}`;
}

/** Who proposed an event, as the pages say it: by name to signed-in members only. */
function proposedBy(
  row: EventsTable,
  proposers: Map<string, { memberId: string; name: string | null }>,
  viewerSignedIn: boolean,
): SafeHtml {
  const proposer = proposers.get(row.id);
  if (row.source !== 'proposal' || !proposer) return html`the community's event calendar`;
  return viewerSignedIn && proposer.name ? html`${proposer.name} (a member)` : html`a member`;
}

function failure(result: CallResult): string {
  const body = result.body as { message?: string; error?: string };
  return body.message ?? body.error ?? 'refused';
}

const RSVP_WORDS: Record<string, string> = {
  queued: 'You RSVPed; it is queued for delivery and will show as confirmed shortly.',
  confirmed: 'You RSVPed; it is confirmed.',
  failed: 'Your RSVP could not be delivered to the event platform. You can RSVP again.',
  cancelled: 'You withdrew your RSVP.',
};

/** The events pages: the upcoming list, each event's page (RSVP, calendar file) and the proposal form. */
export function registerPublishedEventPage(app: FastifyInstance, deps: Deps): void {
  app.register(async (scope) => {
    acceptFormBodies(scope, deps.config);

    scope.get('/events', async (request, reply) => {
      const zone = zoneOf(request);
      const session = await signedIn(deps, request);
      const rows = await upcomingEventRows(deps, 100);
      const proposers = await proposersOf(
        deps,
        rows.filter((row) => row.source === 'proposal').map((row) => row.id),
      );
      const keep = zoneQuery(zone);
      return sendPage(
        reply,
        200,
        'Events',
        html`<h1>Upcoming events</h1>
<form method="get" action="/events" class="actions"><p>${zoneSelect(zone)} <button type="submit">Show times in this zone</button></p></form>
<p class="muted">Times are shown in <strong id="zone">${zone}</strong>.${session ? html` <a href="/events/propose${keep}">Propose an event</a>.` : html` <a href="/signin?next=/events/propose">Sign in</a> to RSVP or propose an event.`}</p>
${
  rows.length
    ? html`<ul class="grid" role="list" id="events">${rows.map(
        (
          row,
        ) => html`<li class="card"><article>${row.cover_url ? html`<img class="cover" src="${row.cover_url}" alt="" loading="lazy">` : ''}
<h2><a href="${pathOf(deps, row)}${keep}">${row.title}</a></h2>
<p>${timeRangeIn(Number(row.start_at), row.end_at === null ? null : Number(row.end_at), zone)}</p>
${row.location ? html`<p>${row.location}</p>` : ''}
<p class="muted">Proposed by ${proposedBy(row, proposers, Boolean(session))}</p></article></li>`,
      )}</ul>`
    : html`<p>No upcoming events.</p>`
}`,
      );
    });

    async function renderProposal(
      request: FastifyRequest,
      reply: FastifyReply,
      status: number,
      notice?: SafeHtml,
    ) {
      const session = await signedIn(deps, request);
      if (!session) return reply.redirect('/signin?next=/events/propose', 303);
      const csrf = csrfToken(deps.config, request, reply);
      const zone = isZone(formField(request, 'tz') ?? '')
        ? (formField(request, 'tz') as string)
        : zoneOf(request);
      const value = (name: string) => formField(request, name) ?? '';
      const field = (name: string, label: string, input: SafeHtml) =>
        html`<p class="field"><label for="p-${name}">${label}</label>${input}</p>`;
      return sendPage(
        reply,
        status,
        'Propose an event',
        html`<h1>Propose an event</h1>${notice ?? ''}
<p>Operators review every proposal; an approved one is published on the events page, and the answer arrives in your event log. This is the same proposal your agents file with <code>ic_events_request</code>, and counts against the same daily limit.</p>
<form method="post" action="/events/propose">${csrfField(csrf)}
${field('title', 'Title (required)', html`<input id="p-title" name="title" required maxlength="200" value="${value('title')}">`)}
<p class="field">${zoneSelect(zone, 'p-tz')}</p>
${field('start', 'Starts (required, in the zone above)', html`<input id="p-start" name="start" type="datetime-local" required value="${value('start')}">`)}
${field('end', 'Ends (optional)', html`<input id="p-end" name="end" type="datetime-local" value="${value('end')}">`)}
${field('location', 'Place', html`<input id="p-location" name="location" maxlength="300" value="${value('location')}">`)}
${field('description', 'Description', html`<textarea id="p-description" name="description" maxlength="4000" rows="4">${value('description')}</textarea>`)}
${field('cover_url', 'Cover image address (https)', html`<input id="p-cover_url" name="cover_url" type="url" maxlength="2000" value="${value('cover_url')}">`)}
${field('capacity', 'Capacity (people)', html`<input id="p-capacity" name="capacity" type="number" min="1" max="100000" value="${value('capacity')}">`)}
${field('host', 'Host', html`<input id="p-host" name="host" maxlength="200" value="${value('host')}">`)}
<fieldset><legend>Who may see it</legend>
<label class="choice"><input type="radio" name="visibility" value="public"${value('visibility') !== 'members' ? html` checked` : ''}> Everyone</label>
<label class="choice"><input type="radio" name="visibility" value="members"${value('visibility') === 'members' ? html` checked` : ''}> Members only</label></fieldset>
<button type="submit" class="primary">Send the proposal</button></form>`,
      );
    }

    scope.get('/events/propose', (request, reply) => renderProposal(request, reply, 200));

    scope.post('/events/propose', async (request, reply) => {
      if (!hasValidCsrf(request)) return refuseForgery(reply);
      const tz = formField(request, 'tz') ?? 'UTC';
      const zone = isZone(tz) ? tz : 'UTC';
      const start = instantOfLocal(formField(request, 'start'), zone);
      const endText = formField(request, 'end');
      const end = endText ? instantOfLocal(endText, zone) : undefined;
      if (start === undefined || (endText && end === undefined))
        return renderProposal(
          request,
          reply,
          400,
          html`<p role="alert">Give the start (and end) as a date and time.</p>`,
        );
      const text = (name: string) => formField(request, name)?.trim() || undefined;
      const capacity = text('capacity');
      const result = await runForPage(deps, request, requestEvent, {
        title: text('title'),
        start: new Date(start).toISOString(),
        end: end === undefined ? undefined : new Date(end).toISOString(),
        location: text('location'),
        description: text('description'),
        cover_url: text('cover_url'),
        capacity: capacity && /^\d+$/.test(capacity) ? Number(capacity) : capacity,
        host: text('host'),
        visibility: text('visibility'),
      });
      if (result.status === 401) return reply.redirect('/signin?next=/events/propose', 303);
      if (result.status >= 400)
        return renderProposal(
          request,
          reply,
          result.status,
          html`<p role="alert">Not sent: ${failure(result)}</p>`,
        );
      const id = (result.body as { id: string }).id;
      return sendPage(
        reply,
        202,
        'Proposal sent',
        html`<h1>Proposal sent</h1><p role="status">Your proposal <code id="proposal-id">${id}</code> waits for an operator's review. The decision arrives in your event log.</p><p><a href="/events${zoneQuery(zone)}">Back to the events</a></p>`,
      );
    });

    async function renderEvent(
      request: FastifyRequest<{ Params: { id: string } }>,
      reply: FastifyReply,
      status: number,
      notice?: SafeHtml,
    ) {
      const row = await eventOfPage(deps, request.params.id);
      if (!row)
        return sendPage(
          reply,
          404,
          'No such event',
          html`<h1>No such event</h1><p>It may have ended or never been published. <a href="/events">See the upcoming events</a>.</p>`,
        );
      const zone = zoneOf(request);
      const session = await signedIn(deps, request);
      const proposers = await proposersOf(deps, [row.id]);
      const here = pathOf(deps, row);
      const keep = zoneQuery(zone);
      let rsvp: SafeHtml = html`<p><a href="/signin?next=${encodeURIComponent(here)}">Sign in</a> to RSVP.</p>`;
      if (session) {
        const csrf = csrfToken(deps.config, request, reply);
        const latest = await latestRsvp(deps, session.member.id, row.platform_url);
        const live = latest && (latest.status === 'queued' || latest.status === 'confirmed');
        rsvp = html`${latest ? html`<p id="rsvp-state" role="status" data-state="${latest.status}">${RSVP_WORDS[latest.status] ?? latest.status}</p>` : html`<p>Tell the organisers you are coming: your RSVP is delivered to the event platform, and you can withdraw it here.</p>`}
${
  live
    ? html`<form method="post" action="${here}/unrsvp${keep}">${csrfField(csrf)}<button type="submit">Withdraw my RSVP</button>${latest.status === 'queued' ? html` <a href="${here}${keep}">Refresh</a>` : ''}</form>`
    : html`<form method="post" action="${here}/rsvp${keep}">${csrfField(csrf)}<button type="submit" class="primary">RSVP</button></form>`
}`;
      }
      return sendPage(
        reply,
        status,
        row.title,
        html`<article><h1>${row.title}</h1>${notice ?? ''}
${row.cover_url ? html`<img class="cover" src="${row.cover_url}" alt="Cover picture of ${row.title}">` : ''}
<dl class="facts"><dt>When</dt><dd>${timeRangeIn(Number(row.start_at), row.end_at === null ? null : Number(row.end_at), zone)}</dd>
<dt>Place</dt><dd>${row.location ?? 'not given'}</dd>
<dt>Proposed by</dt><dd>${proposedBy(row, proposers, Boolean(session))}</dd></dl>
${row.description ? html`<p>${row.description}</p>` : ''}
<h2 id="rsvp">RSVP</h2>${rsvp}
<p><a href="${here}/calendar.ics" download>Add to my calendar (.ics)</a> · <a href="/events${keep}">All events</a></p>
<form method="get" action="${here}"><p>${zoneSelect(zone)} <button type="submit">Show times in this zone</button></p></form>
<p class="muted">Agents RSVP with <code>POST /api/events/rsvp</code> (or <code>ic_events_rsvp</code>) and <code class="wrap">${row.platform_url}</code> as <code>event_url</code>.</p></article>`,
      );
    }

    scope.get<{ Params: { id: string } }>('/events/:id', (request, reply) =>
      renderEvent(request, reply, 200),
    );

    // The calendar file is the registry's getEventCalendar, sent as the file itself.
    scope.get<{ Params: { id: string } }>('/events/:id/calendar.ics', async (request, reply) => {
      const row = await eventOfPage(deps, request.params.id);
      if (!row) return renderEvent(request, reply, 404);
      const result = await runForPage(deps, request, getEventCalendar, { url: row.platform_url });
      if (result.status !== 200) return renderEvent(request, reply, result.status);
      const body = result.body as { filename: string; content_type: string; ics: string };
      return reply
        .type(body.content_type)
        .header('cache-control', 'no-store')
        .header('content-disposition', `attachment; filename="${body.filename}"`)
        .send(body.ics);
    });

    for (const [action, op] of [
      ['rsvp', rsvpToEvent],
      ['unrsvp', cancelRsvpToEvent],
    ] as const) {
      scope.post<{ Params: { id: string } }>(`/events/:id/${action}`, async (request, reply) => {
        if (!hasValidCsrf(request)) return refuseForgery(reply);
        const row = await eventOfPage(deps, request.params.id);
        if (!row) return renderEvent(request, reply, 404);
        const result = await runForPage(deps, request, op, { event_url: row.platform_url });
        if (result.status === 401)
          return reply.redirect(`/signin?next=${encodeURIComponent(pathOf(deps, row))}`, 303);
        if (result.status >= 400)
          return renderEvent(
            request,
            reply,
            result.status,
            html`<p role="alert">Not done: ${failure(result)}</p>`,
          );
        return reply.redirect(`${pathOf(deps, row)}${zoneQuery(zoneOf(request))}#rsvp`, 303);
      });
    }
  });
}
