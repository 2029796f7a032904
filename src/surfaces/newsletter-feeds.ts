import { createHash } from 'node:crypto';
import type { XMLBuilder } from 'fast-xml-parser';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { getIssue, type Issue, recentIssues } from '../domain/content/newsletter.ts';
import { issueMarkdown, renderMarkdown } from '../domain/content/render.ts';
import type { Deps } from '../operations/services.ts';
import { html, SafeHtml } from '../web/html.ts';
import { sendPage } from '../web/respond.ts';

const FEED_ITEMS = 20;
const FEED_TITLE = 'Community newsletter';
/** Feed readers poll; a few minutes of reuse is plenty and the validators make re-polls cheap. */
const CACHE_CONTROL = 'public, max-age=300';

const dayStart = (date: string) => `${date}T00:00:00Z`;

export interface Feed {
  issues: (Issue & { html: string; url: string })[];
  updated: Date;
}

async function loadFeed(deps: Deps): Promise<Feed> {
  const issues = await Promise.all(
    (await recentIssues(deps, FEED_ITEMS)).map(async (issue) => ({
      ...issue,
      html: await renderMarkdown(issueMarkdown(issue)),
      url: `${deps.config.publicUrl}/newsletter/${issue.slug}`,
    })),
  );
  const latest = Math.max(0, ...issues.map((issue) => Date.parse(issue.updated_at)));
  // HTTP dates have whole seconds: round down so If-Modified-Since compares equal.
  return { issues, updated: new Date(Math.floor(latest / 1000) * 1000) };
}

function jsonFeed(deps: Deps, feed: Feed): string {
  const base = deps.config.publicUrl;
  return JSON.stringify({
    version: 'https://jsonfeed.org/version/1.1',
    title: FEED_TITLE,
    home_page_url: `${base}/`,
    feed_url: `${base}/newsletter/feed.json`,
    description: 'The community newsletter: one item per issue.',
    items: feed.issues.map((issue) => ({
      id: issue.url,
      url: issue.url,
      title: issue.title,
      content_html: issue.html,
      ...(issue.summary ? { summary: issue.summary } : {}),
      date_published: dayStart(issue.date),
      date_modified: issue.updated_at,
    })),
  });
}

const ATOM = 'http://www.w3.org/2005/Atom';

/** XML 1.0 has no place for most C0 controls; Markdown could carry them in. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;
const text = (value: string) => value.replace(NOT_XML, '');

let builder: Promise<XMLBuilder> | undefined;

/**
 * Escapes every text and attribute value (`&`, `<`, `>`, quotes), whatever it already holds. Loaded
 * at the first Atom feed asked for, like markdown-it: most instances serve no newsletter.
 */
function xmlBuilder(): Promise<XMLBuilder> {
  builder ??= import('fast-xml-parser').then(
    ({ XMLBuilder }) =>
      new XMLBuilder({
        ignoreAttributes: false,
        attributeNamePrefix: '@',
        format: true,
        suppressEmptyNode: true,
      }),
  );
  return builder;
}

/** Atom 1.0 of the newsletter, built with fast-xml-parser's XMLBuilder. */
export async function atomFeed(base: string, feed: Feed): Promise<string> {
  const self = `${base}/newsletter/feed.xml`;
  const entries = feed.issues.map((issue) => ({
    id: text(issue.url),
    title: text(issue.title),
    link: { '@rel': 'alternate', '@type': 'text/html', '@href': text(issue.url) },
    published: dayStart(issue.date),
    updated: issue.updated_at,
    ...(issue.summary ? { summary: text(issue.summary) } : {}),
    content: { '@type': 'html', '#text': text(issue.html) },
  }));
  return (await xmlBuilder()).build({
    '?xml': { '@version': '1.0', '@encoding': 'utf-8' },
    feed: {
      '@xmlns': ATOM,
      id: text(self),
      title: FEED_TITLE,
      updated: feed.updated.toISOString(),
      author: { name: new URL(base).host },
      link: [
        { '@rel': 'self', '@type': 'application/atom+xml', '@href': text(self) },
        { '@rel': 'alternate', '@type': 'text/html', '@href': text(`${base}/`) },
      ],
      entry: entries,
    },
  });
}

/** The body with its validators; a conditional request that still matches gets 304 and no body. */
function sendCached(request: FastifyRequest, reply: FastifyReply, type: string, body: string, updated: Date) {
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  reply
    .header('etag', etag)
    .header('last-modified', updated.toUTCString())
    .header('cache-control', CACHE_CONTROL);
  const ifNoneMatch = request.headers['if-none-match'];
  const ifModifiedSince = request.headers['if-modified-since'];
  // If-None-Match wins when both are sent (RFC 9110 §13.2.2).
  const fresh =
    ifNoneMatch !== undefined
      ? ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag || tag.trim() === '*')
      : ifModifiedSince !== undefined && Date.parse(ifModifiedSince) >= updated.getTime();
  if (fresh) return reply.code(304).send();
  return reply.type(type).send(body);
}

/** JSON Feed 1.1 and Atom 1.0 of the newsletter, and a plain page per issue (the items' links). */
export function registerNewsletterFeeds(app: FastifyInstance, deps: Deps): void {
  app.get('/newsletter/feed.json', async (request, reply) => {
    const feed = await loadFeed(deps);
    return sendCached(
      request,
      reply,
      'application/feed+json; charset=utf-8',
      jsonFeed(deps, feed),
      feed.updated,
    );
  });
  app.get('/newsletter/feed.xml', async (request, reply) => {
    const feed = await loadFeed(deps);
    return sendCached(
      request,
      reply,
      'application/atom+xml; charset=utf-8',
      await atomFeed(deps.config.publicUrl, feed),
      feed.updated,
    );
  });
  app.get<{ Params: { slug: string } }>('/newsletter/:slug', async (request, reply) => {
    const { slug } = request.params;
    const issue = /^[a-z0-9][a-z0-9-]{0,79}$/.test(slug) ? await getIssue(deps, slug) : undefined;
    if (!issue) return sendPage(reply, 404, 'No such issue', html`<h1>No such issue</h1>`);
    return sendPage(
      reply,
      200,
      issue.title,
      html`<h1>${issue.title}</h1><p><time datetime="${issue.date}">${issue.date}</time></p>
${new SafeHtml(await renderMarkdown(issueMarkdown(issue)))}
<p><a href="/newsletter/feed.xml">Atom feed</a> · <a href="/newsletter/feed.json">JSON Feed</a></p>`,
    );
  });
}
