import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isClientDocumentUrl } from '../domain/auth/client-metadata-documents.ts';
import { findRegisteredClient, registerClient } from '../domain/auth/oauth-clients.ts';
import { exchangeCode } from '../domain/auth/oauth-code-exchange.ts';
import { rateKeyForIp } from '../http/client.ts';
import { overPerIpLimit } from '../operations/per-ip-limit.ts';
import type { Deps } from '../operations/services.ts';

type Form = Record<string, string | undefined>;

export const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const REGISTERED_GRANTS = ['authorization_code', DEVICE_GRANT];

function oauthError(code: string, description: string) {
  return { error: code, error_description: description };
}

/** RFC 7591 dynamic registration: open, rate limited per IP; every client is public (PKCE, no secret). */
export function registerClientRegistration(app: FastifyInstance, deps: Deps): void {
  app.post('/oauth/register', async (request: FastifyRequest, reply: FastifyReply) => {
    reply.header('cache-control', 'no-store');
    const limit = deps.config.limits.oauthRegistrationsPerMinute;
    if (await overPerIpLimit(deps, 'oauth_register_ip', limit, rateKeyForIp(request.ip))) {
      reply.code(429).header('retry-after', '60');
      return oauthError('slow_down', `At most ${limit} registrations a minute from one address.`);
    }
    const body = (request.body ?? {}) as Record<string, unknown>;
    if (typeof body !== 'object' || Array.isArray(body)) {
      reply.code(400);
      return oauthError('invalid_client_metadata', 'The body is a JSON object of client metadata.');
    }
    // One rule for both grants (docs/decisions.md, "The device grant and client registration"): a
    // client may register for either or both; the device grant also takes a client that never did.
    const asked = Array.isArray(body.grant_types) ? body.grant_types : ['authorization_code'];
    const grantTypes = REGISTERED_GRANTS.filter((grant) => asked.includes(grant));
    if (grantTypes.length === 0 || grantTypes.length !== new Set(asked).size) {
      reply.code(400);
      return oauthError(
        'invalid_client_metadata',
        `grant_types lists authorization_code, ${DEVICE_GRANT} or both.`,
      );
    }
    const redirects = grantTypes.includes('authorization_code');
    const result = await registerClient(deps, {
      clientName: typeof body.client_name === 'string' ? body.client_name : undefined,
      redirectUris: (body.redirect_uris ?? (redirects ? undefined : [])) as string[],
      withoutRedirects: !redirects,
    });
    if (!result.ok) {
      reply.code(400);
      return oauthError(result.error, result.description);
    }
    const { client } = result;
    reply.code(201);
    // RFC 7591 §3.2.1: the metadata as registered, with what the server chose in place of what it refused.
    return {
      client_id: client.client_id,
      client_id_issued_at: Math.floor(Number(client.created_at) / 1000),
      client_name: client.client_name ?? undefined,
      redirect_uris: JSON.parse(client.redirect_uris),
      grant_types: grantTypes,
      response_types: redirects ? ['code'] : [],
      token_endpoint_auth_method: 'none',
      scope: typeof body.scope === 'string' ? body.scope : undefined,
    };
  });
}

/** The token endpoint's authorization_code grant (OAuth 2.1 §4.1.3), in RFC 6749's wire format. */
export async function answerCodeGrant(deps: Deps, request: FastifyRequest, reply: FastifyReply, form: Form) {
  const limit = deps.config.limits.oauthCodeExchangesPerMinute;
  if (await overPerIpLimit(deps, 'oauth_code_ip', limit, rateKeyForIp(request.ip))) {
    reply.code(429).header('retry-after', '60');
    return oauthError('slow_down', 'Too many code exchanges from this address; wait a minute.');
  }
  const clientId = form.client_id ?? '';
  const documents = { allowPrivate: deps.config.oauthClientDocumentsFromPrivateAddresses };
  // A metadata-document client was checked at the authorization endpoint; the code is bound to its id.
  const known = isClientDocumentUrl(clientId, documents) || (await findRegisteredClient(deps, clientId));
  if (!clientId || !known) {
    reply.code(401);
    return oauthError('invalid_client', 'client_id names no registered client.');
  }
  const outcome = await exchangeCode(deps, {
    code: form.code ?? '',
    clientId,
    redirectUri: form.redirect_uri ?? '',
    codeVerifier: form.code_verifier ?? '',
  });
  if (!outcome.ok) {
    reply.code(400);
    const description = {
      unknown: 'The code is not valid.',
      replayed: 'The code was already used; the token it became is revoked.',
      expired: 'The code has expired; authorize again.',
      wrong_client: 'The code was issued to another client.',
      wrong_redirect: 'redirect_uri differs from the one the code was issued for.',
      wrong_verifier: 'code_verifier does not match the code_challenge (PKCE S256).',
      no_verifier: 'code_verifier is required (PKCE).',
    }[outcome.why];
    return oauthError(outcome.error, description);
  }
  return { access_token: outcome.token, token_type: 'Bearer', scope: outcome.scopes.join(' ') };
}
