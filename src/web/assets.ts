import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';

/**
 * The pages' stylesheet and their scripts, served by us (the CSP allows 'self' and nothing else:
 * no inline code, no other host). Each is read once at start; its address carries a hash of the
 * content, so a browser may keep it a year and still gets the new one after a change.
 */
interface Asset {
  path: string;
  url: string;
  type: string;
  body: string;
}

function asset(file: string, type: string): Asset {
  const body = readFileSync(new URL(`./assets/${file}`, import.meta.url), 'utf8');
  const version = createHash('sha256').update(body).digest('base64url').slice(0, 12);
  const path = `/assets/${file}`;
  return { path, url: `${path}?v=${version}`, type, body };
}

export const STYLESHEET = asset('site.css', 'text/css; charset=utf-8');
export const COPY_SCRIPT = asset('copy.js', 'text/javascript; charset=utf-8');
/** Keeps the first page of "My agents" current (it polls /my-agents/heads: connect-src 'self'). */
/** The site's icon, linked from every page's head. */
export const FAVICON = asset('favicon.svg', 'image/svg+xml');
export const LIVE_SCRIPT = asset('live.js', 'text/javascript; charset=utf-8');
/** The API reference's filter box (/docs): the page works without it. */
export const REFERENCE_SCRIPT = asset('reference.js', 'text/javascript; charset=utf-8');

export function registerAssets(app: FastifyInstance): void {
  for (const { path, url, type, body } of [STYLESHEET, COPY_SCRIPT, LIVE_SCRIPT, REFERENCE_SCRIPT, FAVICON]) {
    const version = new URL(url, 'http://x').searchParams.get('v');
    app.get(path, async (request, reply) => {
      // Kept a year only at the versioned address the pages link; the bare path is checked each time.
      const current = (request.query as Record<string, unknown>).v === version;
      return reply
        .type(type)
        .header('cache-control', current ? 'public, max-age=31536000, immutable' : 'no-cache')
        .send(body);
    });
  }
}
