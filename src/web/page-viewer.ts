import type { FastifyInstance } from 'fastify';
import type { Deps } from '../operations/services.ts';
import {
  BARE_TITLE_SLOT,
  BRAND_SLOT,
  DEFAULT_COMMUNITY_NAME,
  escapeHtml,
  html,
  TITLE_SLOT,
  VIEWER_SLOT,
} from './html.ts';
import { signedIn } from './respond.ts';

/** Whether a tier may use the operator console: it grants at least one operator scope. */
export function isOperatorTier(deps: Deps, tier: string): boolean {
  return deps.tiers.scopesOf(tier).some((scope) => scope.startsWith('admin:'));
}

/** The header's slot for a visitor who is not signed in: signing in comes back to `url`. */
export function signInSlot(url: string): string {
  return html`<span class="viewer" data-viewer><a href="/signin?next=${encodeURIComponent(url)}">Sign in</a></span>`
    .value;
}

/**
 * Every page's header says who is signed in, and shows operators the way to their console. Pages are
 * rendered without the session (most do not need it), so one onSend hook fills the header's slot
 * for every text/html answer that has one: error and 404 pages too. A page that already looked the
 * session up (signedIn) does not pay for a second lookup; an answer that is not a page costs nothing.
 */
export function showViewerInHeader(app: FastifyInstance, deps: Deps): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    const type = reply.getHeader('content-type');
    if (typeof payload !== 'string' || typeof type !== 'string' || !type.startsWith('text/html'))
      return done(null, payload);
    const at = payload.indexOf(VIEWER_SLOT);
    if (at === -1) return done(null, payload);
    signedIn(deps, request).then(
      (session) => {
        if (!session) {
          // Signing in from a page comes back to it (not from the sign-in pages, nor the dev outbox,
          // whose key must not ride along in a mailed link).
          const stay = request.method !== 'GET' || /^\/(signin|dev)\b/.test(request.url);
          if (stay) return done(null, payload);
          const back = signInSlot(request.url);
          return done(null, payload.slice(0, at) + back + payload.slice(at + VIEWER_SLOT.length));
        }
        const { member } = session;
        const viewer = html`<span class="viewer" data-viewer>Signed in as <strong>${member.name}</strong> (${member.tier})${
          isOperatorTier(deps, member.tier) ? html` · <a href="/operator">Operator console</a>` : ''
        } · <a href="/signin">Account</a></span>`;
        done(null, payload.slice(0, at) + viewer.value + payload.slice(at + VIEWER_SLOT.length));
      },
      () => done(null, payload),
    );
  });
}

/**
 * Every page's header and title carry the community's name (COMMUNITY_NAME), and its logo when
 * COMMUNITY_LOGO_URL is set: pages are rendered with the default name, and this hook puts the
 * configured one in its place for every text/html answer, error pages included.
 */
export function showCommunityInFrame(app: FastifyInstance, deps: Deps): void {
  const frame = communityFrame(deps.config);
  if (!frame) return;
  app.addHook('onSend', (_request, reply, payload, done) => {
    const type = reply.getHeader('content-type');
    if (typeof payload !== 'string' || typeof type !== 'string' || !type.startsWith('text/html'))
      return done(null, payload);
    done(null, frame(payload));
  });
}

/** What puts the community's name and logo into a rendered page, or undefined when the defaults stand. */
export function communityFrame(config: Deps['config']): ((page: string) => string) | undefined {
  const { communityName: name, communityLogoUrl: logo } = config;
  if (name === DEFAULT_COMMUNITY_NAME && !logo) return undefined;
  const brand =
    html`<a class="brand" href="/">${logo ? html`<img class="logo" src="${logo}" alt="" width="32" height="32"> ` : ''}${name}</a>`
      .value;
  const title = ` · ${escapeHtml(name)}</title>`;
  const bare = `<title>${escapeHtml(name)}</title>`;
  return (page) =>
    page
      .replace(TITLE_SLOT, () => title)
      .replace(BARE_TITLE_SLOT, () => bare)
      .replace(BRAND_SLOT, () => brand);
}
