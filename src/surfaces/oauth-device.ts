import type { FastifyInstance } from 'fastify';
import { findRegisteredClient, markClientUsed } from '../domain/auth/oauth-clients.ts';
import { pollSignup } from '../operations/auth/signup-poll.ts';
import { startSignup } from '../operations/auth/signup-start.ts';
import { runOperation } from '../operations/pipeline/run.ts';
import type { Deps } from '../operations/services.ts';
import { answerCodeGrant, DEVICE_GRANT } from './oauth-code.ts';
import { callRequestFrom } from './rest.ts';

type Form = Record<string, string | undefined>;

function oauthError(code: string, description: string, extra: Record<string, unknown> = {}) {
  return { error: code, error_description: description, ...extra };
}

/**
 * Standard RFC 8628 endpoints (form-encoded, access_token, 400 authorization_pending) over the
 * same registry operations as the spec's own start and poll, so limits and state are shared.
 */
export function registerOAuthDeviceFacade(app: FastifyInstance, deps: Deps): void {
  // Encapsulated, so that form bodies are parsed on these two routes only: operations take JSON.
  app.register(async (scope) => registerFacadeRoutes(scope, deps));
}

async function registerFacadeRoutes(app: FastifyInstance, deps: Deps): Promise<void> {
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string' },
    (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    },
  );

  app.post('/oauth/device_authorization', async (request, reply) => {
    const form = (request.body ?? {}) as Form;
    const scopes = (form.scope ?? '').split(' ').filter(Boolean);
    // No registration needed (docs/decisions.md, "The device grant and client registration"): a
    // registered client is shown by the name it registered, any other client_id as it came, unverified.
    const registered = form.client_id ? await findRegisteredClient(deps, form.client_id) : undefined;
    if (registered) await markClientUsed(deps, registered.clientId);
    const clientName = registered?.clientName ?? form.client_id;
    const result = await runOperation(
      deps,
      startSignup,
      // No session: these endpoints serve device clients, and a browser cookie riding along means nothing here.
      callRequestFrom(
        request,
        { scopes, ...(clientName ? { client_name: clientName.slice(0, 80) } : {}) },
        undefined,
        'rest',
        false,
      ),
    );
    reply.headers(result.headers).header('cache-control', 'no-store');
    const body = result.body as Record<string, unknown>;
    if (result.status !== 200) {
      reply.code(result.status === 429 ? 429 : 400);
      return oauthError(
        result.status === 429 ? 'slow_down' : 'invalid_scope',
        String(body.message ?? body.error),
      );
    }
    return {
      device_code: body.device_code,
      user_code: body.user_code,
      verification_uri: body.verify_url,
      verification_uri_complete: body.verify_url_complete,
      expires_in: body.expires_in,
      interval: body.interval,
    };
  });

  app.post('/oauth/token', async (request, reply) => {
    const form = (request.body ?? {}) as Form;
    reply.header('cache-control', 'no-store');
    if (form.grant_type === 'authorization_code') return answerCodeGrant(deps, request, reply, form);
    if (form.grant_type !== DEVICE_GRANT) {
      reply.code(400);
      return oauthError('unsupported_grant_type', `Supported: authorization_code and ${DEVICE_GRANT}.`);
    }
    const result = await runOperation(
      deps,
      pollSignup,
      callRequestFrom(request, { device_code: form.device_code ?? '' }, undefined, 'rest', false),
    );
    const body = result.body as Record<string, unknown>;
    if (result.status === 200 && body.status === 'completed') {
      return {
        access_token: body.agent_token,
        token_type: 'Bearer',
        scope: (body.granted_scopes as string[]).join(' '),
      };
    }
    reply.code(400);
    if (result.status === 200 && body.status === 'pending')
      return oauthError('authorization_pending', 'The member has not decided yet.');
    if (result.status === 200 && body.status === 'cancelled')
      return oauthError('access_denied', String(body.reason));
    if (result.status === 429)
      return oauthError('slow_down', String(body.message), { interval: body.interval });
    if (result.status === 410 && body.error === 'expired_token')
      return oauthError('expired_token', String(body.message));
    return oauthError('invalid_grant', String(body.message ?? 'The device code is not valid.'));
  });
}
