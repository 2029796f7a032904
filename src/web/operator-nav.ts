import { html, type SafeHtml } from './html.ts';

const LINKS = [
  ['/operator', 'Overview'],
  ['/operator/tier-requests', 'Tier requests'],
  ['/operator/highlights', 'Highlights'],
  ['/operator/event-requests', 'Event proposals'],
  ['/operator/members', 'Members'],
  ['/operator/feedback', 'Feedback'],
  ['/operator/bookings', 'Bookings'],
] as const;

/** The operator pages' own navigation, marking the page the operator is on. */
export function operatorNav(current?: string): SafeHtml {
  return html`<nav class="subnav" aria-label="Operator console"><ul>${LINKS.map(
    ([path, label]) =>
      html`<li><a href="${path}"${path === current ? html` aria-current="page"` : ''}>${label}</a></li>`,
  )}</ul></nav>`;
}

export const notice = (text: string): SafeHtml => html`<p role="status">${text}</p>`;
