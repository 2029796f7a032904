import type { FastifyInstance } from 'fastify';
import type { Deps } from '../operations/services.ts';
import { bookings } from '../storage/bookings.ts';
import { html } from './html.ts';
import { sendPage, signedIn } from './respond.ts';

const when = (ms: number) => new Date(ms).toISOString().slice(0, 16).replace('T', ' ');

/** The member's booking requests and what became of them (times in UTC). */
export function registerBookingsPage(app: FastifyInstance, deps: Deps): void {
  app.get('/bookings', async (request, reply) => {
    const session = await signedIn(deps, request);
    if (!session) return reply.redirect('/signin?next=/bookings', 303);
    const rows = await bookings.ofMember(deps.db, session.member.id);
    return sendPage(
      reply,
      200,
      'Bookings',
      html`<h1>Your bookings</h1>
<p>Requests your agents (or you) made for rooms and printers. Times are UTC. A queued request is decided within a minute or so.</p>
${
  rows.length
    ? html`<table><thead><tr><th>Resource</th><th>From</th><th>To</th><th>Status</th><th>Purpose</th></tr></thead><tbody>
${rows.map((row) => html`<tr id="${row.id}"><td>${row.name}</td><td>${when(Number(row.start_at))}</td><td>${when(Number(row.end_at))}</td><td>${row.status}${row.reason ? html` (${row.reason.replaceAll('_', ' ')})` : ''}</td><td>${row.purpose}</td></tr>`)}
</tbody></table>`
    : html`<p>No bookings yet.</p>`
}`,
    );
  });
}
