import { html, type SafeHtml } from './html.ts';

export const operatorNav = html`<nav><a href="/operator/tier-requests">Tier requests</a> · <a href="/operator/highlights">Highlights</a> · <a href="/operator/members">Members</a> · <a href="/operator/feedback">Feedback</a></nav>`;

export const notice = (text: string): SafeHtml => html`<p role="status">${text}</p>`;
