import { SCOPE_CATALOG } from '../domain/access/scopes.ts';
import { protectedResourceMetadataUrl } from '../http/bearer-challenge.ts';

/**
 * The card's security schemes, each in both versions' shapes in one object (0.3's `type` fields and
 * 1.0's one-of member), so either SDK reads the card in its own format. Both describe the one
 * credential the endpoint checks, an `agt_` token in the Authorization header: `agentBearer` says
 * what it is, `agentOAuth` how an agent gets one with the authorization-code flow (PKCE, dynamic
 * registration; the device flow is in the same metadata).
 */
const BEARER = 'agentBearer';
const OAUTH = 'agentOAuth';

export function securitySchemes(base: string) {
  const description = `Agent token; how to get one is in ${base}/.well-known/ai-agent.json.`;
  const bearerFormat = 'agt_<base64url of 32 bytes>';
  const authorizationCode = {
    authorizationUrl: `${base}/oauth/authorize`,
    tokenUrl: `${base}/oauth/token`,
    scopes: { ...SCOPE_CATALOG },
  };
  const oauthDescription = `OAuth 2.1 authorization code with PKCE (S256), public clients registered at ${base}/oauth/register; the access token is an agent token. Metadata: ${protectedResourceMetadataUrl(base, 'a2a')}.`;
  const metadataUrl = `${base}/.well-known/oauth-authorization-server`;
  return {
    [BEARER]: {
      type: 'http',
      scheme: 'bearer',
      bearerFormat,
      description,
      httpAuthSecurityScheme: { scheme: 'Bearer', bearerFormat, description },
    },
    [OAUTH]: {
      type: 'oauth2',
      description: oauthDescription,
      flows: { authorizationCode },
      oauth2MetadataUrl: metadataUrl,
      oauth2SecurityScheme: {
        description: oauthDescription,
        flows: { authorizationCode: { ...authorizationCode, pkceRequired: true } },
        oauth2MetadataUrl: metadataUrl,
      },
    },
  };
}

/** Either scheme with these scopes, in 0.3's `security` and 1.0's `securityRequirements` spelling. */
function either(scopes: string[]) {
  return {
    security: [{ [BEARER]: scopes }, { [OAUTH]: scopes }],
    securityRequirements: [
      { schemes: { [BEARER]: { list: scopes } } },
      { schemes: { [OAUTH]: { list: scopes } } },
    ],
  };
}

/** The card as a whole: a token, or nothing (public skills take none; each skill says what it needs). */
export function cardSecurity() {
  const { security, securityRequirements } = either([]);
  return { security: [...security, {}], securityRequirements: [...securityRequirements, { schemes: {} }] };
}

/** A skill that needs the agent token: either scheme, with the skill's scope. */
export function skillSecurity(scopes: string[]) {
  return either(scopes);
}
