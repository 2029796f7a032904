import { COPY_SCRIPT, FAVICON, LIVE_SCRIPT, STYLESHEET } from './assets.ts';

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/** Markup that is already safe; anything else interpolated into `html` is escaped. */
export class SafeHtml {
  readonly value: string;
  constructor(value: string) {
    this.value = value;
  }
  toString(): string {
    return this.value;
  }
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0];
  values.forEach((value, i) => {
    out += render(value) + strings[i + 1];
  });
  return new SafeHtml(out);
}

function render(value: unknown): string {
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === undefined || value === null || value === false) return '';
  return escapeHtml(value);
}

/**
 * Where the header says who is signed in. Pages are rendered without knowing the session; one hook
 * (src/web/page-viewer.ts) fills this in for every text/html answer, error pages included.
 */
export const VIEWER_SLOT = '<span class="viewer" data-viewer><a href="/signin">Sign in</a></span>';

/** The name pages are rendered with; one hook (page-viewer.ts) puts the community's name and logo in its place. */
export const DEFAULT_COMMUNITY_NAME = 'agent-commons';
/** The header's brand and the title's suffix, as rendered: what that hook replaces. */
export const BRAND_SLOT = `<a class="brand" href="/">${DEFAULT_COMMUNITY_NAME}</a>`;
export const TITLE_SLOT = ` · ${DEFAULT_COMMUNITY_NAME}</title>`;
/** The title of a page titled with the name alone (the home page: `page('')`). */
export const BARE_TITLE_SLOT = `<title>${DEFAULT_COMMUNITY_NAME}</title>`;

/** The one script the pages use (the copy button of the agent console), served by us. */
export function copyScript(): SafeHtml {
  return html`<script src="${COPY_SCRIPT.url}" defer></script>`;
}

/** The script that keeps "My agents" current (src/web/assets/live.js). */
export function liveScript(): SafeHtml {
  return html`<script src="${LIVE_SCRIPT.url}" defer></script>`;
}

export function page(title: string, body: SafeHtml): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${new SafeHtml(title ? `<title>${escapeHtml(title)}${TITLE_SLOT}` : BARE_TITLE_SLOT)}
<link rel="stylesheet" href="${STYLESHEET.url}">
<link rel="icon" href="${FAVICON.url}" type="image/svg+xml">
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="site"><nav aria-label="Site">${new SafeHtml(BRAND_SLOT)}
<ul><li><a href="/events">Events</a></li><li><a href="/resources">Rooms and printers</a></li><li><a href="/bookings">Bookings</a></li><li><a href="/highlights">Highlights</a></li><li><a href="/agent-console">Agent console</a></li><li><a href="/my-agents">My agents</a></li><li><a href="/membership">Membership</a></li><li><a href="/docs">API</a></li></ul>
${new SafeHtml(VIEWER_SLOT)}</nav></header>
<main id="main">${body}</main>
</body>
</html>`.value;
}
