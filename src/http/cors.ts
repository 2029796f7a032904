// Cross-origin access (CORS) for every path, in one request hook: the public documents for any
// origin, the API (REST, MCP, A2A) for the origins the operator lists, with the bearer as the only
// credential. Pages (src/web/) get nothing from here: they stay same-origin.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

export interface CorsSettings {
  /** The configured public URL: its origin is this service's own, never a cross-origin caller. */
  publicUrl: string;
  /** Origins allowed to call the API from a browser with a bearer (CORS_ALLOWED_ORIGINS). */
  corsOrigins: readonly string[];
}

/**
 * Documents any page may read: they are the same for everyone (no cookie, no bearer changes them),
 * so `Access-Control-Allow-Origin: *` without credentials gives nothing away. The OAuth
 * registration and token endpoints are here too: browser-based MCP hosts call them from their own
 * origin, and they read no cookie.
 */
const PUBLIC_PATHS = new Set([
  '/openapi.json',
  '/llms.txt',
  '/discovery/resources',
  '/newsletter/feed.json',
  '/newsletter/feed.xml',
  '/oauth/register',
  '/oauth/token',
]);

/** The request headers the API reads: bearer and body, MCP's, signed requests', A2A's, x402's. */
const API_REQUEST_HEADERS = [
  'authorization',
  'content-type',
  'accept',
  'mcp-protocol-version',
  'mcp-session-id',
  'mcp-method',
  'mcp-name',
  'last-event-id',
  'idempotency-key',
  'signature',
  'signature-input',
  'signature-agent',
  'content-digest',
  'a2a-version',
  'a2a-extensions',
  'payment-signature',
  'x-request-id',
];
const API_REQUEST_HEADER_SET = new Set(API_REQUEST_HEADERS);
/** MCP's per-tool parameter headers (`Mcp-Param-<name>`), whose names a tool's schema chooses. */
const MCP_PARAM_HEADER = /^mcp-param-[a-z0-9_.-]+$/;

/** The answer headers a browser agent needs to read: limits, challenges, protocol versions, receipts. */
export const EXPOSED_HEADERS = [
  'WWW-Authenticate',
  'RateLimit',
  'RateLimit-Policy',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'Retry-After',
  'MCP-Protocol-Version',
  'Mcp-Session-Id',
  'A2A-Version',
  'Location',
  'Idempotent-Replayed',
  'Deprecation',
  'Sunset',
  'Link',
  'X-Request-Id',
  'PAYMENT-REQUIRED',
  'PAYMENT-RESPONSE',
].join(', ');

const API_METHODS = 'GET, HEAD, POST, DELETE';
const PUBLIC_METHODS = 'GET, HEAD, POST';
const PUBLIC_REQUEST_HEADERS = 'content-type, authorization, mcp-protocol-version';
/** How long a browser may keep a preflight's answer (Chromium keeps at most 2 hours). */
const MAX_AGE_SECONDS = '600';

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

export function isPublicDocument(path: string): boolean {
  return path.startsWith('/.well-known/') || PUBLIC_PATHS.has(path);
}

/**
 * The headers of a preflight's `Access-Control-Request-Headers` the API takes, lower-cased; a header
 * it does not read is left out, and the browser then refuses the request itself.
 */
function allowedRequestHeaders(requested: string | undefined): string {
  const allowed = [...API_REQUEST_HEADERS];
  for (const item of (requested ?? '').split(',')) {
    const name = item.trim().toLowerCase();
    if (name && !API_REQUEST_HEADER_SET.has(name) && MCP_PARAM_HEADER.test(name)) allowed.push(name);
  }
  return allowed.join(', ');
}

function answerPreflight(reply: FastifyReply, methods: string, headers: string): void {
  reply
    .code(204)
    .header('access-control-allow-methods', methods)
    .header('access-control-allow-headers', headers)
    .header('access-control-max-age', MAX_AGE_SECONDS)
    .send();
}

/** A `Vary` value with `Origin` in it, whatever the answer had set before. */
function withOrigin(vary: unknown): string {
  const current = typeof vary === 'string' ? vary : Array.isArray(vary) ? vary.join(', ') : '';
  if (current === '') return 'Origin';
  if (current.split(',').some((name) => ['origin', '*'].includes(name.trim().toLowerCase()))) return current;
  return `${current}, Origin`;
}

/**
 * One `onRequest` hook for every request (callback style: no promise per request):
 *
 * - a public document (`/.well-known/*`, `/openapi.json`, `/llms.txt`, …) carries
 *   `Access-Control-Allow-Origin: *`, and its preflight is answered;
 * - an `/api/` request whose `Origin` is one of `corsOrigins` gets that origin back, `Vary: Origin`
 *   and the exposed headers, its preflight answered 204 with the methods and headers the surfaces
 *   read; its Cookie header is dropped before anything reads it, so only the bearer can
 *   authenticate it (there is never an `Access-Control-Allow-Credentials`);
 * - any other origin gets nothing from here: the browser refuses it, and MCP answers it 403 (its
 *   DNS-rebinding check, src/surfaces/mcp-server-pool.ts).
 *
 * With origins listed, every `/api/` answer carries `Vary: Origin` (a shared cache must not hand one
 * origin's answer to another); with none, the API's answers are exactly what they were.
 */
export function registerCors(app: FastifyInstance, settings: CorsSettings): void {
  const allowed = new Set(settings.corsOrigins);
  let own = '';
  try {
    own = new URL(settings.publicUrl).origin;
  } catch {
    own = '';
  }
  allowed.delete(own);
  const listed = allowed.size > 0;

  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done) => {
    const { url } = request;
    // Most requests are API calls: they are told apart on their first characters.
    if (url.startsWith('/api/')) {
      if (!listed) return done();
      reply.header('vary', 'Origin');
      const origin = single(request.headers.origin);
      if (origin === undefined || !allowed.has(origin)) return done();
      reply
        .header('access-control-allow-origin', origin)
        .header('access-control-expose-headers', EXPOSED_HEADERS);
      // A browser sends its cookies only when the page asks for them, and reads the answer only
      // with Allow-Credentials, which is never sent; a cookie that rode along anyway authenticates nothing.
      delete request.headers.cookie;
      if (request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined) {
        reply.header('vary', 'Origin, Access-Control-Request-Headers');
        answerPreflight(
          reply,
          API_METHODS,
          allowedRequestHeaders(single(request.headers['access-control-request-headers'])),
        );
        return;
      }
      return done();
    }
    if (!isPublicDocument(pathOf(url))) return done();
    reply.header('access-control-allow-origin', '*');
    if (request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined) {
      answerPreflight(reply, PUBLIC_METHODS, PUBLIC_REQUEST_HEADERS);
      return;
    }
    done();
  });

  if (!listed) return;
  // An answer may set its own Vary (a gzipped one says Accept-Encoding): Origin is kept beside it.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (request.url.startsWith('/api/')) reply.header('vary', withOrigin(reply.getHeader('vary')));
    done(null, payload);
  });
}
