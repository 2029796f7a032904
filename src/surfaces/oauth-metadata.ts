import type { FastifyInstance } from 'fastify';
import { ALL_SCOPES } from '../domain/access/scopes.ts';
import {
  PROTECTED_RESOURCE_PATH,
  RESOURCE_PATHS,
  type ResourceSurface,
  resourceOf,
} from '../http/bearer-challenge.ts';
import type { Deps } from '../operations/services.ts';
import { DEVICE_GRANT } from './oauth-code.ts';
import { signedRequestsProfile } from './signing-profile.ts';

export function protectedResourceDocument(deps: Deps, surface: ResourceSurface) {
  const base = deps.config.publicUrl;
  return {
    resource: resourceOf(base, surface),
    authorization_servers: [base],
    scopes_supported: ALL_SCOPES,
    bearer_methods_supported: ['header'],
    resource_name: {
      rest: 'agent-commons REST API',
      mcp: 'agent-commons MCP server',
      a2a: 'agent-commons A2A',
    }[surface],
    resource_documentation: `${base}/docs`,
    // An extension parameter (RFC 9728 §2): how a token with a bound key signs its requests.
    signed_requests: signedRequestsProfile(base),
  };
}

/** RFC 8414 metadata: what this authorization server serves, and nothing it does not. */
export function authorizationServerDocument(deps: Deps) {
  const base = deps.config.publicUrl;
  return {
    issuer: base,
    authorization_endpoint: `${base}/oauth/authorize`,
    token_endpoint: `${base}/oauth/token`,
    registration_endpoint: `${base}/oauth/register`,
    device_authorization_endpoint: `${base}/oauth/device_authorization`,
    // No refresh tokens: an agt_ token lasts until it is revoked, as a device-grant token does.
    grant_types_supported: ['authorization_code', DEVICE_GRANT],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    // RFC 9207: the redirect back names the issuer, so a client of several servers can tell them apart.
    authorization_response_iss_parameter_supported: true,
    // MCP 2025-11-25's preferred registration: the client_id is the URL of the client's metadata document.
    client_id_metadata_document_supported: true,
    scopes_supported: ALL_SCOPES,
    service_documentation: `${base}/docs`,
  };
}

/** The metadata documents: one protected-resource document per surface, and the authorization server's. */
export function registerOAuthMetadata(app: FastifyInstance, deps: Deps): void {
  for (const surface of Object.keys(RESOURCE_PATHS) as ResourceSurface[]) {
    const document = protectedResourceDocument(deps, surface);
    app.get(`${PROTECTED_RESOURCE_PATH}${RESOURCE_PATHS[surface]}`, async () => document);
  }
  const authorizationServer = authorizationServerDocument(deps);
  app.get('/.well-known/oauth-authorization-server', async () => authorizationServer);
}
