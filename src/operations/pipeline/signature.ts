import { hash, verify } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { isInnerList } from 'structured-headers';
import { type ApiError, apiError } from '../../core/errors.ts';
import { ANONYMOUS, type TokenRef } from '../../domain/auth/principal.ts';
import { nonceStore } from '../../storage/signature-nonces.ts';
import type { Deps } from '../services.ts';
import type { CallRequest, HttpMessage, Verdict } from '../types.ts';
import type { Authentication } from './authenticate.ts';
import { type JudgedAuthority, judgedAuthority } from './signature-authority.ts';
import { contentDigestProblem, ed25519PublicKey, profileSignatureBase } from './signature-base.ts';
import {
  checkComponents,
  checkParameters,
  FRESHNESS_SECONDS,
  joined,
  Refused,
  refuse,
  SIGNATURE_AGENT,
  SIGNATURE_LABEL,
  signatureBytes,
  signatureInput,
} from './signature-rules.ts';

/**
 * The signature step (reference §7, RFC 9421 strict profile), right after authentication: a bearer
 * whose token has a bound Ed25519 key is checked against the HTTP request that carried it.
 *
 * - A request that carries a signature is always verified, enforcement or not: a signature that is
 *   sent is either right or refused (so an agent can test its signing before enforcement is on).
 * - An unsigned request passes while enforcement is off, and is refused once it is on.
 * - A refused signature refuses the bearer, as an unknown token would be refused: an operation that
 *   needs a bearer answers 401 `signature verification failed: <reason>`; a public one runs as
 *   anonymous (setup-check names the reason).
 *
 * The profile's rules and their reasons are in signature-rules.ts; the RFC 9421 and RFC 9530
 * mechanics (signature base, Content-Digest, keys) in signature-base.ts.
 */

/**
 * Undefined when there is nothing to check (no bound key and no signature, the common case);
 * otherwise the authentication as it stands after the check when the verdict is at once (no nonce,
 * or a nonce the store claimed synchronously), else the verdict's promise, which `withVerdict`
 * turns into the authentication (the caller goes on in the same callback: one promise hop fewer).
 */
export function verifySignature(
  deps: Deps,
  request: CallRequest,
  auth: Authentication,
  now: number,
): Authentication | Promise<ApiError | null> | undefined {
  if (auth.principal.kind !== 'bearer') return undefined;
  const { token } = auth.principal;
  const headers = request.httpHeaders ?? {};
  const signed = headers['signature-input'] !== undefined || headers.signature !== undefined;
  if (!signed) return token.signingEnforced ? refused(refusal(UNSIGNED)) : undefined;
  const http = request.http;
  if (!http) return refused(refusal('the call did not come in an HTTP request that can be signed'));
  // One verdict per HTTP request: the calls it carries (batch items) share it and its nonce.
  if (http.verdict === undefined) http.verdict = check(deps, token, headers, http, now);
  const verdict = http.verdict;
  return verdict instanceof Promise ? verdict : withVerdict(auth, verdict);
}

/** The authentication after the signature's verdict: a refused signature refuses the bearer. */
export function withVerdict(auth: Authentication, problem: ApiError | null): Authentication {
  return problem ? refused(problem) : auth;
}

const UNSIGNED =
  'this token requires signed requests (enforcement is on) and the request carries no signature';

function refused(problem: ApiError): Authentication {
  return { principal: ANONYMOUS, problem };
}

/** 401 in the spec's words: `signature verification failed: <reason>`. */
export function refusal(
  reason: string,
  options: {
    message?: string;
    extra?: { expected_authority: string; received_authority: string | null };
  } = {},
) {
  return apiError('signature_verification_failed', { reason, hint: options.message, extra: options.extra });
}

/** A signature that does not verify, naming the authority it was judged against and the one received. */
class Unverified extends Refused {
  readonly judged: JudgedAuthority;
  readonly received: string | undefined;
  readonly targetUri: string;

  constructor(judged: JudgedAuthority, received: string | undefined, targetUri: string) {
    const sentTo = received === undefined ? 'no Host' : `Host ${JSON.stringify(received)}`;
    super(
      judged.fromHost
        ? `the signature does not verify against @authority ${JSON.stringify(judged.expected)} (the request's Host): the method, authority, target URI or Content-Digest differ from what was signed, or another key signed it`
        : `the signature does not verify against @authority ${JSON.stringify(judged.expected)} (PUBLIC_URL's): the request came with ${sentTo}, which is not a name of this service, or the method, target URI or Content-Digest differ from what was signed, or another key signed it`,
    );
    this.judged = judged;
    this.received = received;
    this.targetUri = targetUri;
  }

  toApiError(): ApiError {
    return refusal(this.message, {
      message: `@authority was judged as ${JSON.stringify(this.judged.expected)} and @target-uri as ${JSON.stringify(this.targetUri)}; sign those, with the key bound to this token (docs/signed-requests.md).`,
      extra: { expected_authority: this.judged.expected, received_authority: this.received ?? null },
    });
  }
}

/** The problem with the signature, or null when it is good; a promise while the nonce's claim is written. */
function check(
  deps: Deps,
  token: TokenRef,
  headers: IncomingHttpHeaders,
  http: HttpMessage,
  now: number,
): Verdict {
  try {
    const verified = verifyMessage(deps.config.publicUrl, token, headers, http, now);
    if (verified.nonce === undefined) return null;
    const key = hash('sha256', `${verified.keyId} ${verified.nonce}`, 'base64url');
    const until = (Math.max(verified.created, Math.floor(now / 1000)) + FRESHNESS_SECONDS + 1) * 1000;
    const claimed = nonceStore(deps, now).claim(key, until, now);
    if (claimed instanceof Promise) return claimed.then(nonceVerdict);
    return nonceVerdict(claimed);
  } catch (error) {
    if (error instanceof Refused) return problemOf(error);
    // Kept as the verdict, so every call of the request is answered this same failure.
    return Promise.reject(error);
  }
}

function nonceVerdict(claimed: boolean): ApiError | null {
  return claimed ? null : refusal('nonce already used');
}

function problemOf(error: Refused): ApiError {
  return error instanceof Unverified ? error.toApiError() : refusal(error.message);
}

interface Verified {
  keyId: string;
  created: number;
  nonce?: string;
}

/** Everything but the nonce, which is spent only once the signature is known to be good. */
function verifyMessage(
  publicUrl: string,
  token: TokenRef,
  headers: IncomingHttpHeaders,
  http: HttpMessage,
  now: number,
): Verified {
  const inputHeader = joined(headers['signature-input']);
  const signatureHeader = joined(headers.signature);
  if (inputHeader === undefined && signatureHeader === undefined) refuse(UNSIGNED);
  if (inputHeader === undefined || signatureHeader === undefined)
    refuse('Signature-Input and Signature must be sent together');
  const key = token.signingKey;
  if (!key) refuse('no signing key is bound to this token (it was never registered, or it was revoked)');
  const input = signatureInput(inputHeader);
  const bytes = signatureBytes(signatureHeader);
  if (!isInnerList(input))
    refuse(`Signature-Input ${SIGNATURE_LABEL} must be an inner list of covered components`);
  const params = checkParameters(input[1], key.id, now);
  const hasBody = http.body !== undefined && http.body !== '';
  checkComponents(input[0], hasBody, headers[SIGNATURE_AGENT] !== undefined);
  if (hasBody) {
    const problem = contentDigestProblem(joined(headers['content-digest']), http.body as string);
    if (problem) refuse(problem);
  }
  if (bytes.length !== 64) refuse('the signature is not 64 bytes long, as an Ed25519 signature is');
  const judged = judgedAuthority(publicUrl, headers.host);
  const url = `${judged.origin}${http.target}`;
  const base = profileSignatureBase({ method: http.method, authority: judged.expected, url, headers }, input);
  if (!verify(null, Buffer.from(base), ed25519PublicKey(key.x), bytes))
    throw new Unverified(judged, headers.host, url);
  return { keyId: key.id, ...params };
}
