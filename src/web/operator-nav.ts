import type { FastifyReply } from 'fastify';
import { html, type SafeHtml } from './html.ts';
import { sendPage } from './respond.ts';

export const operatorNav = html`<nav><a href="/operator/tier-requests">Tier requests</a> · <a href="/operator/highlights">Highlights</a> · <a href="/operator/event-requests">Event proposals</a> · <a href="/operator/members">Members</a> · <a href="/operator/feedback">Feedback</a></nav>`;

export const notice = (text: string): SafeHtml => html`<p role="status">${text}</p>`;

const OUTCOME_STATUS: Record<string, number> = { done: 200, unknown: 404, not_pending: 409, not_open: 409 };

/** The page after an operator's decision: 200 when done, 404 unknown, 409 already decided, else 400. */
export function decisionPage(
  reply: FastifyReply,
  page: { title: string; back: string; outcome: string; done: string; failed: string },
) {
  const text = page.outcome === 'done' ? page.done : `${page.failed}: ${page.outcome.replaceAll('_', ' ')}.`;
  return sendPage(
    reply,
    OUTCOME_STATUS[page.outcome] ?? 400,
    page.title,
    html`${operatorNav}${notice(text)}<p><a href="${page.back}">Back</a></p>`,
  );
}
