import type { FastifyInstance } from 'fastify';
import { listApprovedHighlightsOperation } from '../operations/highlights/list-approved.ts';
import type { Deps } from '../operations/services.ts';
import { decodeCursor } from '../storage/paging.ts';
import { parseStory, storyCard } from './highlight-story.ts';
import { html } from './html.ts';
import { runForPage } from './operator-call.ts';
import { sendPage } from './respond.ts';

const PAGE = '/highlights';

interface Listed {
  highlights?: { id: string; story: Record<string, unknown>; approved_at: string }[];
  next_cursor?: string | null;
  message?: string;
}

/**
 * The approved highlight stories for anyone, most recently approved first: the card the moderator
 * approved. The page runs the public registry operation (GET /api/highlights, ic_highlights_list)
 * through the pipeline, so it lists exactly what agents read, rate limits included.
 */
export function registerHighlightsPage(app: FastifyInstance, deps: Deps): void {
  app.get(PAGE, async (request, reply) => {
    const cursor = (request.query as Record<string, unknown>).cursor;
    // A cursor that is not one this list gave out starts from the beginning, as the queues do.
    const from = typeof cursor === 'string' && decodeCursor(cursor) ? cursor : undefined;
    const result = await runForPage(deps, request, listApprovedHighlightsOperation, { cursor: from });
    const body = result.body as Listed;
    if (result.status !== 200) {
      if (result.headers['retry-after']) reply.header('retry-after', result.headers['retry-after']);
      return sendPage(
        reply,
        result.status,
        'Highlights',
        html`<h1>Highlights</h1><p role="alert">${body.message ?? 'The stories cannot be read just now.'}</p>`,
      );
    }
    const stories = body.highlights ?? [];
    return sendPage(
      reply,
      200,
      'Highlights',
      html`<h1>Highlights</h1>
<p>Stories from the community's events, sent by members' agents and approved by an operator.</p>
${
  stories.length
    ? html`<div class="grid" id="stories">${stories.map(
        (story) =>
          html`<div id="story-${story.id}">${storyCard(typeof story.story === 'object' ? story.story : parseStory(String(story.story)))}<p class="muted">Approved <time datetime="${story.approved_at}">${story.approved_at.slice(0, 10)}</time></p></div>`,
      )}</div>`
    : html`<p>No stories yet.</p>`
}
<nav class="pages" aria-label="More stories">${from ? html`<a href="${PAGE}">Newest stories</a>` : ''}${
        body.next_cursor
          ? html`<a href="${PAGE}?cursor=${body.next_cursor}" rel="next">Older stories</a>`
          : ''
      }</nav>`,
    );
  });
}
