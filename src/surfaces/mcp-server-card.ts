import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { API_VERSION } from '../operations/api-version.ts';
import type { Deps } from '../operations/services.ts';
import { MCP_PATH } from './mcp.ts';

/** The Server Card extension's schema (test/fixtures/mcp-server-card/). */
export const SERVER_CARD_SCHEMA = 'https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json';
const CARD_TYPE = 'application/mcp-server-card+json';
const CATALOG_TYPE = 'application/ai-catalog+json';

/** Where the extension reserves the card: the Streamable HTTP URL followed by `/server-card`. */
export const SERVER_CARD_PATH = `${MCP_PATH}/server-card`;
/** Where the earlier drafts of the proposal put it, and where many discovery tools still look. */
const WELL_KNOWN_CARD_PATH = '/.well-known/mcp/server-card.json';
const CATALOG_PATH = '/.well-known/ai-catalog.json';

export const MCP_DESCRIPTION =
  'Act for a member of a community space: events, bookings, research, highlights.';

/**
 * The namespace of the server's registry name: PUBLIC_URL's host in reverse-DNS order
 * (`org.example.commons` for commons.example.org). A host nobody can prove to own (an IP literal,
 * `localhost` or a `.localhost` name, a single label) gets `local`, never a reversed IP
 * (docs/decisions.md, "The MCP server's name on a host without a domain").
 */
export function mcpNamespace(publicUrl: string): string {
  const host = new URL(publicUrl).hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  const labels = host.split('.');
  if (isIP(host) !== 0 || labels.length < 2 || labels.at(-1) === 'localhost') return 'local';
  return labels.reverse().join('.');
}

/** The name mcp.json and the server card share: `namespace/agent-commons`. */
export function mcpServerName(publicUrl: string): string {
  return `${mcpNamespace(publicUrl)}/agent-commons`;
}

/**
 * The one remote, as both the registry's server.json and the card describe it: Streamable HTTP, with
 * a bearer that is optional (public tools answer without one, and a host is sent to OAuth by the 401).
 */
export function mcpRemote(base: string) {
  return {
    type: 'streamable-http' as const,
    url: `${base}${MCP_PATH}`,
    headers: [
      {
        name: 'Authorization',
        description:
          'Bearer agt_… for member tools; a host without one is sent to OAuth by the 401 (RFC 9728 discovery).',
        isRequired: false,
        isSecret: true,
      },
    ],
  };
}

/**
 * The MCP Server Card (the Server Card extension, SEP-2127): identity and how to connect, before any
 * connection. It lists no tools, resources or prompts: the extension leaves those to tools/list, which
 * cannot go stale. `supportedProtocolVersions` is left out because the versions come from the MCP SDK,
 * which is loaded at the first MCP request only.
 */
export function serverCard(deps: Deps) {
  const base = deps.config.publicUrl;
  return {
    $schema: SERVER_CARD_SCHEMA,
    name: mcpServerName(base),
    title: 'agent-commons',
    description: MCP_DESCRIPTION,
    version: API_VERSION,
    websiteUrl: base,
    remotes: [mcpRemote(base)],
  };
}

/** An AI Catalog listing the one card, the way the extension's discovery finds it from a domain. */
export function aiCatalog(deps: Deps) {
  const base = deps.config.publicUrl;
  const publisher = mcpNamespace(base) === 'local' ? 'local' : new URL(base).hostname;
  return {
    specVersion: '1.0',
    entries: [
      {
        identifier: `urn:air:${publisher}:mcp:agent-commons`,
        type: CARD_TYPE,
        url: `${base}${SERVER_CARD_PATH}`,
      },
    ],
  };
}

/** A public, read-only document: any origin may read it, for an hour, revalidated by its ETag. */
function publicDocument(body: unknown, type: string) {
  const text = JSON.stringify(body);
  const etag = `"${createHash('sha256').update(text).digest('base64url').slice(0, 27)}"`;
  return (request: FastifyRequest, reply: FastifyReply) => {
    reply
      .header('access-control-allow-origin', '*')
      .header('access-control-expose-headers', 'ETag')
      .header('cache-control', 'public, max-age=3600')
      .header('etag', etag)
      .header('vary', 'accept');
    const tags = request.headers['if-none-match']?.split(',').map((tag) => tag.trim().replace(/^W\//, ''));
    if (tags?.some((tag) => tag === etag || tag === '*')) return reply.code(304).send();
    // The media type asked for; a client that asks for plain JSON gets it labelled as such.
    const accept = request.headers.accept ?? '';
    const served = !accept.includes(type) && accept.includes('application/json') ? 'application/json' : type;
    return reply.type(`${served}; charset=utf-8`).send(text);
  };
}

function preflight(_request: FastifyRequest, reply: FastifyReply) {
  return reply
    .code(204)
    .header('access-control-allow-origin', '*')
    .header('access-control-allow-methods', 'GET')
    .header('access-control-allow-headers', 'Content-Type, If-None-Match')
    .header('access-control-max-age', '600')
    .send();
}

export function registerMcpServerCard(app: FastifyInstance, deps: Deps): void {
  const card = publicDocument(serverCard(deps), CARD_TYPE);
  const catalog = publicDocument(aiCatalog(deps), CATALOG_TYPE);
  for (const [path, handler] of [
    [SERVER_CARD_PATH, card],
    [WELL_KNOWN_CARD_PATH, card],
    [CATALOG_PATH, catalog],
  ] as const) {
    app.get(path, handler);
    app.options(path, preflight);
  }
}
