import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { renderMarkdown } from '../domain/content/render.ts';
import type { Deps } from '../operations/services.ts';
import { html, SafeHtml } from './html.ts';
import { sendPage } from './respond.ts';

/** Where the agent console links for "how to make a key pair and sign a request". */
export const SIGNING_GUIDE = '/guides/signed-requests';

/** The guide's Markdown, shipped beside the sources (the image copies it); undefined without it. */
function guideSource(): string | undefined {
  try {
    return readFileSync(new URL('../../docs/signed-requests.md', import.meta.url), 'utf8');
  } catch {
    return undefined;
  }
}

/** Each table in a box of its own that scrolls sideways on a phone (and takes focus to be scrolled). */
function scrollableTables(rendered: string): string {
  let n = 0;
  return rendered
    .replace(
      /<table>/g,
      () => `<div class="table" tabindex="0" role="region" aria-label="Table ${++n}"><table>`,
    )
    .replace(/<\/table>/g, '</table></div>');
}

/**
 * docs/signed-requests.md as a page, for members binding a key on the agent console and for their
 * agents' developers. Rendered once, at the first request (markdown-it escapes any raw HTML).
 */
export function registerSigningGuide(app: FastifyInstance, _deps: Deps): void {
  let rendered: Promise<string | undefined> | undefined;
  app.get(SIGNING_GUIDE, async (_request, reply) => {
    rendered ??= Promise.resolve(guideSource()).then(async (source) =>
      source === undefined ? undefined : scrollableTables(await renderMarkdown(source)),
    );
    const body = await rendered;
    if (body === undefined)
      return sendPage(
        reply,
        404,
        'Signed requests',
        html`<h1>Signed requests</h1><p>The guide is not installed with this server: see <code>docs/signed-requests.md</code> in the service's repository.</p>`,
      );
    return sendPage(
      reply,
      200,
      'Signed requests',
      html`<article class="guide">${new SafeHtml(body)}</article>`,
    );
  });
}
