import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import { COPY_SCRIPT, PAGE_STYLE } from './html.ts';

function sha256Source(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

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
 * The Content-Security-Policy of every page. Nothing loads unless listed: the one inline stylesheet
 * and the one inline script by their hashes, images from here or any https host (newsletter issues
 * may show them). Forms post here only; the sign-in provider and the code host are listed because
 * Chromium applies form-action to the redirect a form answers with (/signin/oidc, the code-host
 * link). No page may be framed, set a <base> or embed plugins.
 */
export function contentSecurityPolicy(config: Config): string {
  const formTargets = [
    "'self'",
    ...new Set(
      [originOf(config.oidc?.issuer), originOf(config.codeHost.webUrl)].filter(
        (origin): origin is string => origin !== undefined,
      ),
    ),
  ];
  return [
    "default-src 'none'",
    `script-src ${sha256Source(COPY_SCRIPT)}`,
    `style-src ${sha256Source(PAGE_STYLE)}`,
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
 * headers, whichever route, error or not-found handler sent it (direct reads answer JSON only).
 */
export function securePages(app: FastifyInstance, config: Config): void {
  const headers = pageSecurityHeaders(config);
  app.addHook('onSend', (_request, reply, payload, done) => {
    const type = reply.getHeader('content-type');
    if (typeof type === 'string' && type.startsWith('text/html')) reply.headers(headers);
    done(null, payload);
  });
}
