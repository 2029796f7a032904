import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Config } from './config.ts';
import { acceptRequestId, compileProxyTrust, type ProxyTrust, trustsNoProxy } from './http/client.ts';
import { capConnectionsPerAddress } from './http/connection-cap.ts';
import { registerCors } from './http/cors.ts';
import { readJson } from './http/json-body.ts';
import { keepRawBodies } from './http/raw-body.ts';
import { RequestLines, requestLogger } from './http/request-logger.ts';
import { closeUnusedConnectionsWithIdle } from './http/unused-connections.ts';
import { checkRegistry, OPERATIONS } from './operations/registry.ts';
import type { Deps } from './operations/services.ts';
import type { Operation } from './operations/types.ts';
import { registerA2a } from './surfaces/a2a.ts';
import { answerClientError } from './surfaces/client-errors.ts';
import { registerHealthChecks } from './surfaces/health.ts';
import { registerMcpSurface } from './surfaces/mcp.ts';
import { registerMetricsPath } from './surfaces/metrics-endpoint.ts';
import { registerNewsletterFeeds } from './surfaces/newsletter-feeds.ts';
import { registerClientRegistration } from './surfaces/oauth-code.ts';
import { registerOAuthDeviceFacade } from './surfaces/oauth-device.ts';
import { buildOpenApi } from './surfaces/openapi.ts';
import { registerPaymentDiscovery } from './surfaces/payment-discovery.ts';
import { registerReferencePage } from './surfaces/reference-page.ts';
import {
  frameworkErrorHandler,
  refusedJson,
  registerRestFallbacks,
  registerRestOperations,
} from './surfaces/rest.ts';
import { registerWellKnown } from './surfaces/well-known.ts';
import { registerAgentConsole } from './web/agent-console.ts';
import { registerAssets } from './web/assets.ts';
import { registerBookingsPage } from './web/bookings-page.ts';
import { registerCodeHostLinkPage } from './web/code-host-link.ts';
import { registerDeviceApprovalPages } from './web/device-approval.ts';
import { registerPublishedEventPage } from './web/event-page.ts';
import { registerHighlightsPage } from './web/highlights-page.ts';
import { registerHomePage } from './web/home.ts';
import { registerMembershipPage } from './web/membership.ts';
import { registerMyAgentsPage } from './web/my-agents.ts';
import { registerOAuthConsentPages } from './web/oauth-consent.ts';
import { registerOidcSignInPages } from './web/oidc-sign-in.ts';
import { registerOperatorConsole } from './web/operator-console.ts';
import { registerEventProposalReview } from './web/operator-events.ts';
import { registerFeedbackTriage } from './web/operator-feedback.ts';
import { securePages } from './web/page-security.ts';
import { showCommunityInFrame, showViewerInHeader } from './web/page-viewer.ts';
import { registerSignInPages } from './web/sign-in.ts';
import { registerSigningGuide } from './web/signing-guide.ts';

export interface AppOptions {
  /** Operations beyond the registry (tests add deprecated or failing ones). */
  extraOperations?: Operation[];
  /** false silences the log (tests); otherwise pino at the configured level. */
  logger?: boolean | { level: string; stream?: NodeJS.WritableStream };
}

/**
 * The HTTP server, with the request, head and keep-alive timeouts and the per-address connection cap
 * of `HTTP_*` (docs/configuration.md). node checks the two request timeouts every
 * `connectionsCheckingInterval`: a quarter of the shorter, at most a second, so a request is cut off
 * close to its bound rather than up to node's default 30 s later. Closing it ends the connections
 * that never sent a request as well as the idle ones (src/http/unused-connections.ts).
 */
function httpServer(
  settings: Config['connections'],
  trust: ProxyTrust,
  listener: (request: IncomingMessage, response: ServerResponse) => void,
) {
  const bounds = [settings.headersTimeoutMs, settings.requestTimeoutMs].filter((ms) => ms > 0);
  const server = createServer(
    {
      requestTimeout: settings.requestTimeoutMs,
      headersTimeout: settings.headersTimeoutMs,
      keepAliveTimeout: settings.keepAliveTimeoutMs,
      connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(Math.min(...bounds) / 4))),
    },
    listener,
  );
  capConnectionsPerAddress(server, settings.maxPerAddress, trust);
  closeUnusedConnectionsWithIdle(server);
  return server;
}

/** Builds the HTTP app from its dependencies. It never reads the environment and never listens. */
export async function buildApp(deps: Deps, options: AppOptions = {}): Promise<FastifyInstance> {
  const operations = [...OPERATIONS, ...(options.extraOperations ?? [])];
  checkRegistry(operations);
  const loggerOption = options.logger ?? { level: deps.config.logLevel };
  const logLevel = typeof loggerOption === 'object' ? loggerOption.level : deps.config.logLevel;
  // One rule for the client address, read by Fastify's request.ip and by the connection cap alike.
  const trust = compileProxyTrust(deps.config.trustProxy);
  const app = Fastify({
    // Every request, page or API, MCP or A2A, is Fastify's: a hook or plugin added once holds for all.
    serverFactory: (handler) => httpServer(deps.config.connections, trust, handler),
    logger:
      loggerOption === false
        ? false
        : {
            level: logLevel,
            stream: typeof loggerOption === 'object' ? loggerOption.stream : undefined,
            // Only method and path: query strings carry device codes and research text, headers carry tokens.
            serializers: {
              req: (request) => ({ method: request.method, path: request.url.split('?')[0], id: request.id }),
            },
          },
    // A request's logger becomes pino's child only when it logs a line (src/http/request-logger.ts);
    // with no log, Fastify's own factory hands every request the silent logger itself.
    childLoggerFactory: loggerOption === false ? undefined : requestLogger,
    logController: new RequestLines(logLevel),
    // Trusting no proxy, Fastify reads the socket's address as it is, rather than walking an
    // X-Forwarded-For list through a rule that trusts no entry of it (the same client, for less).
    trustProxy: trustsNoProxy(deps.config.trustProxy) ? false : trust,
    requestIdHeader: false,
    genReqId: (request) => acceptRequestId(request.headers['x-request-id']) ?? randomUUID(),
    bodyLimit: deps.config.defaultBodyLimit,
    return503OnClosing: true,
    clientErrorHandler: answerClientError,
    frameworkErrors: frameworkErrorHandler(deps),
  });

  // Operations take JSON only: a text/plain body is a 415, not a string handed to validation.
  app.removeContentTypeParser('text/plain');
  // An empty body sent as application/json is no body (clients that always send the header can
  // call operations that take none); anything else is read by the JSON rule every surface shares
  // (src/http/json-body.ts: prototype keys refused with their own message).
  app.removeContentTypeParser('application/json');
  keepRawBodies(app);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '') return done(null, undefined);
    request.rawBody = body as string;
    const reading = readJson(body as string);
    return reading.ok ? done(null, reading.value) : done(refusedJson(reading.refused));
  });

  // Set as the request arrives (a callback hook, no promise per request), so every reply carries them:
  // the one place for a header every answer has.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    reply.header('x-content-type-options', 'nosniff');
    done();
  });
  // Which other origins may read what: the public documents any, the API the listed ones (bearer only).
  registerCors(app, deps.config);
  registerAssets(app);

  // The API: REST operations, MCP and A2A, with no hook that only pages need.
  registerRestOperations(app, deps, operations);
  registerMcpSurface(app, deps, operations);
  registerA2a(app, deps, operations);
  registerRestFallbacks(app, deps);
  registerWellKnown(app, deps, operations);
  registerPaymentDiscovery(app, deps);
  const openapi = buildOpenApi(deps, operations);
  app.get('/openapi.json', async () => openapi);
  // Liveness: the process answers. Readiness: the parts it stands on answer too, and it is not draining.
  registerHealthChecks(app, deps);
  registerMetricsPath(app, deps);

  // The pages, in a scope of their own: its onSend hooks (the page headers, the viewer in the
  // header) run for every answer of a page route, error and not-found pages included, and for no
  // API answer, which never is HTML.
  app.register(async (pages) => {
    // CSP, frame and referrer headers on every HTML answer; the cross-site check of every form.
    securePages(pages, deps.config);
    // Every page's header says who is signed in (filled in as the page is sent).
    showViewerInHeader(pages, deps);
    showCommunityInFrame(pages, deps);
    registerOAuthDeviceFacade(pages, deps);
    registerClientRegistration(pages, deps);
    registerSignInPages(pages, deps);
    registerOidcSignInPages(pages, deps);
    registerDeviceApprovalPages(pages, deps);
    registerOAuthConsentPages(pages, deps);
    registerAgentConsole(pages, deps);
    registerMembershipPage(pages, deps);
    registerMyAgentsPage(pages, deps);
    registerSigningGuide(pages, deps);
    registerCodeHostLinkPage(pages, deps);
    registerOperatorConsole(pages, deps);
    registerFeedbackTriage(pages, deps);
    registerEventProposalReview(pages, deps);
    registerBookingsPage(pages, deps);
    registerPublishedEventPage(pages, deps);
    registerHighlightsPage(pages, deps);
    registerNewsletterFeeds(pages, deps);
    registerReferencePage(pages, deps, operations);
    registerHomePage(pages, deps);
  });
  return app;
}
