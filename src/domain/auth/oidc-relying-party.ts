import type * as OpenidClient from 'openid-client';
import { isLoopback, type OidcConfig } from '../../config.ts';
import { normalizeEmail } from '../members/members.ts';
import type { OidcLoginSecrets } from './oidc-logins.ts';

/** Why a sign-in through the provider failed; each maps to one 4xx page (web/oidc-sign-in.ts). */
export type OidcFailureReason =
  /** Discovery, the token endpoint, the JWKS or userinfo did not answer properly. */
  | 'unreachable'
  /** The provider refused the grant, or its answer failed a check (signature, iss, aud, exp, nonce, state). */
  | 'rejected'
  /** The provider gave no usable email address. */
  | 'no_email'
  /** The provider says the address is not verified. */
  | 'unverified_email';

export class OidcSignInError extends Error {
  readonly reason: OidcFailureReason;

  constructor(reason: OidcFailureReason, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.reason = reason;
  }
}

export interface OidcRelyingParty {
  /** Where to send the browser: the provider's authorization endpoint with state, nonce and PKCE. */
  authorizationUrl(secrets: OidcLoginSecrets): Promise<URL>;
  /** Redeems the code from the callback and returns the verified, normalized email address. */
  verifiedEmail(callbackQuery: URLSearchParams, secrets: OidcLoginSecrets): Promise<string>;
}

const REQUEST_TIMEOUT_SECONDS = 10;

/** openid-client, loaded by the first sign-in through the provider (an instance without OIDC never loads it). */
function openidClient(): Promise<typeof OpenidClient> {
  return import('openid-client');
}

/**
 * Authorization code flow with PKCE (S256) through openid-client. The provider's metadata is read
 * on first use and kept; a failed discovery is retried on the next sign-in rather than cached, so a
 * provider that was down at boot does not disable sign-in until a restart.
 */
export function createOidcRelyingParty(config: OidcConfig, redirectUri: string): OidcRelyingParty {
  let discovered: Promise<OpenidClient.Configuration> | undefined;
  const configuration = () => {
    discovered ??= discover(config).catch((error: unknown) => {
      discovered = undefined;
      throw new OidcSignInError('unreachable', 'the provider metadata could not be read', { cause: error });
    });
    return discovered;
  };

  return {
    async authorizationUrl(secrets) {
      const [client, server] = await Promise.all([openidClient(), configuration()]);
      return client.buildAuthorizationUrl(server, {
        redirect_uri: redirectUri,
        response_type: 'code',
        scope: 'openid email',
        state: secrets.state,
        nonce: secrets.nonce,
        code_challenge: await client.calculatePKCECodeChallenge(secrets.codeVerifier),
        code_challenge_method: 'S256',
      });
    },

    async verifiedEmail(callbackQuery, secrets) {
      const [client, server] = await Promise.all([openidClient(), configuration()]);
      // The redirect URI sent to the token endpoint is this URL without its query, so it is built
      // from the configured public address, never from the Host header.
      const current = new URL(redirectUri);
      current.search = callbackQuery.toString();
      try {
        const tokens = await client.authorizationCodeGrant(server, current, {
          expectedState: secrets.state,
          expectedNonce: secrets.nonce,
          pkceCodeVerifier: secrets.codeVerifier,
          idTokenExpected: true,
        });
        const idToken = tokens.claims();
        if (!idToken) throw new OidcSignInError('rejected', 'the provider sent no ID token');
        if (typeof idToken.email === 'string') return emailFrom(idToken);
        // Many providers put the email in userinfo only, unless asked for it in the ID token.
        const userinfo = await client.fetchUserInfo(server, tokens.access_token, idToken.sub);
        return emailFrom(userinfo);
      } catch (error) {
        throw asSignInError(client, error);
      }
    },
  };
}

async function discover(config: OidcConfig): Promise<OpenidClient.Configuration> {
  const client = await openidClient();
  const issuer = new URL(config.issuer);
  // Plain http is allowed only for a provider on this machine (config.ts refuses it elsewhere).
  const insecure = issuer.protocol === 'http:' && isLoopback(issuer.hostname);
  return client.discovery(
    issuer,
    config.clientId,
    config.clientSecret ? { client_secret: config.clientSecret } : undefined,
    config.clientSecret ? client.ClientSecretBasic(config.clientSecret) : client.None(),
    {
      timeout: REQUEST_TIMEOUT_SECONDS,
      // Verify the ID token's signature against the provider's JWKS too, not only trust TLS.
      execute: insecure
        ? [client.allowInsecureRequests, client.enableNonRepudiationChecks]
        : [client.enableNonRepudiationChecks],
    },
  );
}

/**
 * The address must be marked verified when the provider says anything about it; a provider that
 * omits `email_verified` altogether is trusted, because the operator chose to configure it and
 * several enterprise providers only issue addresses they manage (docs/configuration.md).
 */
function emailFrom(claims: { readonly [claim: string]: unknown }): string {
  const email = normalizeEmail(claims.email);
  if (!email) throw new OidcSignInError('no_email', 'the provider gave no usable email address');
  if (claims.email_verified !== undefined && claims.email_verified !== true)
    throw new OidcSignInError('unverified_email', 'the provider has not verified this email address');
  return email;
}

function asSignInError(client: typeof OpenidClient, error: unknown): OidcSignInError {
  if (error instanceof OidcSignInError) return error;
  if (error instanceof client.ResponseBodyError || error instanceof client.AuthorizationResponseError)
    return new OidcSignInError('rejected', `the provider refused: ${error.error}`, { cause: error });
  const code = error instanceof client.ClientError ? error.code : undefined;
  const transport =
    error instanceof TypeError ||
    code === 'OAUTH_TIMEOUT' ||
    code === 'OAUTH_ABORT' ||
    code === 'OAUTH_RESPONSE_IS_NOT_CONFORM' ||
    code === 'OAUTH_RESPONSE_IS_NOT_JSON';
  return transport
    ? new OidcSignInError('unreachable', 'the provider did not answer properly', { cause: error })
    : new OidcSignInError('rejected', 'the provider answer failed verification', { cause: error });
}
