import type { FastifyRequest } from 'fastify';
import { decodeCursor, encodeCursor, type Page, type PageRequest } from '../storage/paging.ts';
import { html, type SafeHtml } from './html.ts';

/** Rows an operator queue page shows at a time. */
export const PAGE_SIZE = 50;

/** The page the address asks for (?cursor=…); a cursor that is not ours starts from the beginning. */
export function pageRequested(request: FastifyRequest): PageRequest {
  const cursor = (request.query as Record<string, unknown>).cursor;
  const after = typeof cursor === 'string' ? decodeCursor(cursor) : undefined;
  return { limit: PAGE_SIZE, after };
}

/** Links under a queue: back to the start when past it, and on to the next page when there is one. */
export function pageLinks(path: string, request: PageRequest, page: Page<unknown>): SafeHtml | '' {
  if (!request.after && !page.next) return '';
  const first = request.after ? html`<a href="${path}">First page</a>` : '';
  const next = page.next
    ? html`<a href="${path}?cursor=${encodeCursor(page.next)}" rel="next">Next page</a>`
    : '';
  return html`<nav class="pages">${first}${first && next ? ' · ' : ''}${next}</nav>`;
}
