import type { Backlog, MemberLabel, QueueName } from '../domain/operator/overview.ts';
import { html, type SafeHtml } from './html.ts';

/** Each queue as the operator pages name it; the two the workers empty have no page of their own. */
export const QUEUE_PAGES: Record<QueueName, { label: string; path?: string; note: string }> = {
  tier_requests: {
    label: 'Tier requests',
    path: '/operator/tier-requests',
    note: 'members asking for a tier',
  },
  highlights: { label: 'Highlights', path: '/operator/highlights', note: 'stories awaiting moderation' },
  event_requests: {
    label: 'Event proposals',
    path: '/operator/event-requests',
    note: 'events members propose',
  },
  feedback: { label: 'Feedback', path: '/operator/feedback', note: 'open tickets' },
  rsvps: { label: 'RSVP deliveries', note: 'queued for the delivery worker' },
  bookings: { label: 'Booking decisions', note: 'queued for the booking worker' },
};

export function waitedFor(ms: number): string {
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 1) return 'less than a minute';
  if (minutes < 60) return `${minutes} minute${minutes === 1 ? '' : 's'}`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} hour${hours === 1 ? '' : 's'}`;
  const days = Math.floor(hours / 24);
  return `${days} days`;
}

/** How many wait, as a page says it: "1000+" where the count stopped at its bound. */
function countOf(backlog: Backlog): string {
  return backlog.more ? `${backlog.waiting}+` : String(backlog.waiting);
}

/** One card per queue: how many wait and for how long the oldest has, linking to its page. */
export function queueCards(queues: Backlog[], now = Date.now()): SafeHtml {
  return html`<ul class="grid" role="list" id="queues">${queues.map((backlog) => {
    const meta = QUEUE_PAGES[backlog.queue];
    const inner = html`<span class="count" id="count-${backlog.queue}">${countOf(backlog)}</span> <strong>${meta.label}</strong><br><span class="muted">${meta.note}${
      backlog.oldestAt !== null ? html`; oldest waiting ${waitedFor(now - backlog.oldestAt)}` : ''
    }</span>`;
    return html`<li class="card">${meta.path ? html`<a class="queue-link" href="${meta.path}">${inner}</a>` : inner}</li>`;
  })}</ul>`;
}

/** The line at the top of a queue page: how many wait, and since when the oldest has. */
export function queueSummary(backlog: Backlog, noun: string, now = Date.now()): SafeHtml {
  if (backlog.waiting === 0)
    return html`<p class="notice" id="waiting">Nothing waits: the queue is empty.</p>`;
  const plural = backlog.waiting === 1 ? noun : noun.endsWith('y') ? `${noun.slice(0, -1)}ies` : `${noun}s`;
  return html`<p class="notice" id="waiting"><strong>${countOf(backlog)}</strong> ${plural} waiting, oldest first${
    backlog.oldestAt !== null ? html` (the oldest for ${waitedFor(now - backlog.oldestAt)})` : ''
  }.</p>`;
}

/** A member as a queue shows them: their name and tier, or the id of one who is gone. */
export function memberLabel(labels: Map<string, MemberLabel>, id: string): SafeHtml {
  const label = labels.get(id);
  return label ? html`<strong>${label.name}</strong> (${label.tier})` : html`member <code>${id}</code>`;
}
