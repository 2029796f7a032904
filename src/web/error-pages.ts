import type { FastifyRequest } from 'fastify';
import type { Deps } from '../operations/services.ts';
import { html, page } from './html.ts';
import { pageSecurityHeaders } from './page-security.ts';
import { communityFrame } from './page-viewer.ts';

/**
 * Whether a failed request gets a page rather than the JSON error: a browser asks for text/html
 * (its navigations do); API clients (application/json, `*\/*`) and any /api/ path keep JSON.
 */
export function wantsPage(request: FastifyRequest): boolean {
  if (request.url.startsWith('/api/')) return false;
  const accept = request.headers.accept;
  return typeof accept === 'string' && /(^|,)\s*text\/html\s*(;|,|$)/i.test(accept);
}

/**
 * The HTML answer for a path with nothing behind it, or a request that failed, with the headers
 * every page carries: these answers come from the app's fallback handlers, outside the pages' scope
 * whose hooks set them on the other pages.
 */
export function errorPage(
  deps: Deps,
  request: FastifyRequest,
  status: number,
  message: string,
): { headers: Record<string, string>; body: string } {
  const path = request.url.split('?')[0];
  const body =
    status === 404
      ? html`<h1>Page not found</h1><p>Nothing is served at <code>${path}</code>.</p><p>Try <a href="/">the home page</a>, <a href="/my-agents">your agents</a> or <a href="/docs">the API reference</a>.</p>`
      : status >= 500
        ? html`<h1>Something went wrong</h1><p>The service could not answer this request. Try again in a moment; if it keeps failing, tell an operator the request id <code>${request.id}</code>.</p><p><a href="/">Home</a></p>`
        : html`<h1>This request cannot be answered</h1><p>${message}</p><p><a href="/">Home</a></p>`;
  const title =
    status === 404 ? 'Page not found' : status >= 500 ? 'Something went wrong' : 'Request refused';
  const rendered = page(title, body);
  return {
    headers: {
      ...pageSecurityHeaders(deps.config),
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
    },
    body: communityFrame(deps.config)?.(rendered) ?? rendered,
  };
}
