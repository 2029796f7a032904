import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';

function originOf(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const { origin } = new URL(url);
    return origin === 'null' ? undefined : origin;
  } catch {
    return undefined;
  }
}

/**
 * The Content-Security-Policy of every page. Nothing loads unless listed: the stylesheet and the
 * scripts from this origin (which may read this origin only: "My agents" polls for news) (src/web/assets.ts; no inline code at all, not even a style attribute), images from here or any https host (newsletter issues
 * may show them). Forms post here only; the sign-in provider and the code host are listed because
 * Chromium applies form-action to the redirect a form answers with (/signin/oidc, the code-host
 * link). A page whose form answers with a redirect elsewhere (the OAuth consent page, to the
 * client's redirect URI) names that target in `extraFormTargets`. No page may be framed, set a
 * <base> or embed plugins.
 */
export function contentSecurityPolicy(config: Config, extraFormTargets: readonly string[] = []): string {
  const formTargets = [
    "'self'",
    ...new Set(
      [originOf(config.oidc?.issuer), originOf(config.codeHost.webUrl), ...extraFormTargets].filter(
        (origin): origin is string => origin !== undefined,
      ),
    ),
  ];
  return [
    "default-src 'none'",
    "script-src 'self'",
    "connect-src 'self'",
    "style-src 'self'",
    "img-src 'self' https:",
    `form-action ${formTargets.join(' ')}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "object-src 'none'",
  ].join('; ');
}

/** The headers every text/html answer carries, error pages included. */
export function pageSecurityHeaders(config: Config): Record<string, string> {
  return {
    'content-security-policy': contentSecurityPolicy(config),
    'x-frame-options': 'DENY',
    // Not no-referrer: with it, browsers send `Origin: null` on our own form posts, which the
    // cross-site check must then refuse. same-origin sends nothing to any other site either.
    'referrer-policy': 'same-origin',
    'x-content-type-options': 'nosniff',
    'cross-origin-opener-policy': 'same-origin',
    'permissions-policy':
      'camera=(), microphone=(), geolocation=(), payment=(), usb=(), serial=(), display-capture=(), fullscreen=()',
  };
}

/**
 * In one place for the whole app: every answer whose Content-Type is text/html gets the page
 * headers, whichever route, error or not-found handler sent it.
 */
export function securePages(app: FastifyInstance, config: Config): void {
  const headers = pageSecurityHeaders(config);
  app.addHook('onSend', (_request, reply, payload, done) => {
    const type = reply.getHeader('content-type');
    if (typeof type === 'string' && type.startsWith('text/html')) {
      // A page that set its own policy (contentSecurityPolicy with extra form targets) keeps it.
      const own = reply.getHeader('content-security-policy');
      reply.headers(headers);
      if (typeof own === 'string') reply.header('content-security-policy', own);
    }
    done(null, payload);
  });
}
