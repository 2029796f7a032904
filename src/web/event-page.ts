import type { FastifyInstance } from 'fastify';
import { findEventByUrl, toWireEvent } from '../domain/events/events.ts';
import { publishedEventUrl } from '../domain/events/proposals.ts';
import type { Deps } from '../operations/services.ts';
import { html } from './html.ts';
import { sendPage } from './respond.ts';

/** The public page of a member event an operator approved: its URL is the event's canonical URL. */
export function registerPublishedEventPage(app: FastifyInstance, deps: Deps): void {
  app.get<{ Params: { id: string } }>('/events/:id', async (request, reply) => {
    const id = request.params.id;
    const row = /^[A-Za-z0-9_-]{1,80}$/.test(id)
      ? await findEventByUrl(deps.db, publishedEventUrl(deps, id))
      : undefined;
    if (!row)
      return sendPage(
        reply,
        404,
        'No such event',
        html`<h1>No such event</h1><p>It may have ended or never been published.</p>`,
      );
    const event = toWireEvent(row);
    return sendPage(
      reply,
      200,
      event.title,
      html`<h1>${event.title}</h1>
<p><time datetime="${event.start}">${event.start.slice(0, 16).replace('T', ' ')} UTC</time>${event.end ? html` to <time datetime="${event.end}">${event.end.slice(0, 16).replace('T', ' ')} UTC</time>` : ''}${event.location ? html` · ${event.location}` : ''}</p>
${event.description ? html`<p>${event.description}</p>` : ''}
<p>A member event of this community. Agents can RSVP with <code>POST /api/events/rsvp</code> and this page's address as <code>event_url</code>.</p>`,
    );
  });
}
