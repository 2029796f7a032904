import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SESSION_COOKIE } from '../domain/auth/sessions.ts';
import type { TokenSigning } from '../domain/auth/signing-keys.ts';
import { rateKeyForIp, readCookie } from '../http/client.ts';
import {
  registerSigningKey,
  revokeSigningKey,
  toggleSignatureEnforcement,
} from '../operations/keys/signing-keys.ts';
import { type CallResult, runOperation } from '../operations/pipeline/run.ts';
import type { Deps } from '../operations/services.ts';
import type { Operation } from '../operations/types.ts';
import { csrfField, formField, hasValidCsrf } from './forms.ts';
import { html, type SafeHtml } from './html.ts';
import { refuseForgery } from './respond.ts';
import { SIGNING_GUIDE } from './signing-guide.ts';

/**
 * The agent console's signing-key controls (spec 4.4): each token's bound key (its thumbprint) with
 * bind, revoke and enforce forms. Each form runs the registry operation through the pipeline, as
 * the REST call with the session cookie would (surface `web`): the same checks, the same event-log
 * entries, the same refusals.
 */

export const KEYS_PATH = '/agent-console/keys';

/** The key column of one live token. */
export function keyCell(tokenId: string, signing: TokenSigning | undefined, csrf: string): SafeHtml {
  const hidden = html`${csrfField(csrf)}<input type="hidden" name="token_id" value="${tokenId}">`;
  const enforced = signing?.enforced ?? false;
  const enforce = html`<form method="post" action="${KEYS_PATH}/enforce">${hidden}<input type="hidden" name="enforce" value="${enforced ? '0' : '1'}"><button type="submit">${enforced ? 'Stop requiring signatures' : 'Require signatures'}</button></form>`;
  if (!signing?.keyId) {
    return html`<form method="post" action="${KEYS_PATH}/register">${hidden}<label for="jwk-${tokenId}">Ed25519 public key (JWK or its <code>x</code>)</label> <input id="jwk-${tokenId}" name="jwk" required maxlength="400" autocomplete="off" aria-describedby="jwk-${tokenId}-help"> <button type="submit">Bind key</button>
<p class="muted" id="jwk-${tokenId}-help">The public half of a key pair your agent keeps: paste the JSON Web Key (<code>{"kty":"OKP","crv":"Ed25519","x":"…"}</code>) or only its <code>x</code> value (43 characters, base64url). Once bound, the token can be required to sign each call (RFC 9421), so a stolen bearer alone is refused. How to make a key pair and sign: <a href="${SIGNING_GUIDE}">the signing guide</a>.</p></form>${enforced ? html`<p class="warning">Signatures required, no key bound: this token answers nothing.</p>${enforce}` : ''}`;
  }
  return html`<p>Key <code>${signing.keyId}</code><br>thumbprint <code>${signing.thumbprint}</code><br>${enforced ? 'signatures required' : 'signatures checked when sent'}</p>
${enforce}<form method="post" action="${KEYS_PATH}/revoke">${hidden}<button type="submit">Revoke key</button></form>`;
}

/** A pasted public key: the JWK as JSON, or only its `x`. */
function jwkOf(pasted: string): unknown {
  const text = pasted.trim();
  if (!text.startsWith('{')) return { kty: 'OKP', crv: 'Ed25519', x: text };
  try {
    return JSON.parse(text);
  } catch {
    return { kty: 'OKP', crv: 'Ed25519', x: text };
  }
}

function runAsPage(deps: Deps, request: FastifyRequest, op: Operation, input: unknown): Promise<CallResult> {
  const header = (name: string) => {
    const value = request.headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  return runOperation(deps, op, {
    surface: 'web',
    requestId: request.id,
    ip: rateKeyForIp(request.ip),
    userAgent: header('user-agent'),
    sessionId: readCookie(header('cookie'), SESSION_COOKIE),
    input,
    log: request.log,
    headersUnused: false,
    httpHeaders: request.headers,
  });
}

type Render = (request: FastifyRequest, reply: FastifyReply, status: number, notice?: SafeHtml) => unknown;

/** The three forms' handlers, in the console's scope (its form parser; its CSRF tokens, src/web/forms.ts). */
export function registerKeyControls(scope: FastifyInstance, deps: Deps, render: Render, page: string): void {
  const controls: [string, Operation, (request: FastifyRequest) => Record<string, unknown>][] = [
    ['register', registerSigningKey, (request) => ({ jwk: jwkOf(formField(request, 'jwk') ?? '') })],
    ['revoke', revokeSigningKey, () => ({})],
    [
      'enforce',
      toggleSignatureEnforcement,
      (request) => ({ enforce: formField(request, 'enforce') === '1' }),
    ],
  ];
  for (const [action, op, inputOf] of controls) {
    scope.post(`${KEYS_PATH}/${action}`, async (request, reply) => {
      if (!hasValidCsrf(request)) return refuseForgery(reply);
      const input = { token_id: formField(request, 'token_id') ?? '', ...inputOf(request) };
      const result = await runAsPage(deps, request, op, input);
      if (result.status === 401) return reply.redirect('/signin', 303);
      if (result.status < 400) return reply.redirect(page, 303);
      const body = result.body as { message?: string; error?: string };
      const problem = body.message ?? body.error ?? 'refused';
      return render(request, reply, result.status, html`<p role="alert" class="warning">${problem}</p>`);
    });
  }
}
