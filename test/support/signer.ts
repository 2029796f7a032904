import { generateKeyPairSync, type KeyObject, randomUUID, sign } from 'node:crypto';
import signatures from 'http-message-signatures';
import * as webBotAuth from 'web-bot-auth';
import { signerFromJWK } from 'web-bot-auth/crypto';
import { keyIdOf } from '../../src/domain/auth/signing-keys.ts';
import { contentDigestOf } from '../../src/operations/pipeline/signature-base.ts';

/**
 * A client's side of signed requests, signed by third parties: http-message-signatures (npm), or
 * web-bot-auth (npm), builds Signature-Input and Signature; only the key pair and the Content-Digest
 * are made here.
 */

export interface ClientKey {
  privateKey: KeyObject;
  jwk: { kty: 'OKP'; crv: 'Ed25519'; x: string };
  keyId: string;
}

export function newClientKey(): ClientKey {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const { x } = publicKey.export({ format: 'jwk' }) as { x: string };
  return { privateKey, jwk: { kty: 'OKP', crv: 'Ed25519', x }, keyId: keyIdOf(x) };
}

export interface SignOptions {
  key: ClientKey;
  created: Date;
  /** A fresh random nonce by default; null for none. */
  nonce?: string | null;
  expires?: Date;
  alg?: string;
  keyid?: string;
  label?: string;
  /** The covered components; default: the profile's for the request. */
  fields?: string[];
}

export interface OutgoingRequest {
  method: string;
  /** The URL as the client addresses it (the service's PUBLIC_URL and the path). */
  url: string;
  headers?: Record<string, string>;
  body?: string;
}

/** The request's headers with Content-Digest (when it has a body), Signature-Input and Signature added. */
export async function signRequest(
  request: OutgoingRequest,
  options: SignOptions,
): Promise<Record<string, string>> {
  const headers: Record<string, string> = { ...request.headers };
  const hasBody = request.body !== undefined && request.body !== '';
  if (hasBody) headers['content-digest'] = contentDigestOf(request.body as string);
  const fields = options.fields ?? [
    '@method',
    '@authority',
    '@target-uri',
    ...(hasBody ? ['content-digest'] : []),
  ];
  const nonce = options.nonce === undefined ? randomUUID() : options.nonce;
  const params = ['created', 'keyid', 'alg'];
  if (nonce !== null) params.push('nonce');
  if (options.expires) params.push('expires');
  const signed = await signatures.httpbis.signMessage(
    {
      key: {
        id: options.keyid ?? options.key.keyId,
        alg: options.alg ?? 'ed25519',
        sign: async (data: Buffer) => sign(null, data, options.key.privateKey),
      },
      name: options.label ?? 'sig1',
      fields,
      params,
      paramValues: { created: options.created, expires: options.expires, nonce: nonce ?? undefined },
    },
    { method: request.method, url: request.url, headers },
  );
  return signed.headers as Record<string, string>;
}

/** A fetch that signs every request it sends (for SDK clients that take a fetch of their own). */
export function signingFetch(key: ClientKey, created: () => Date): typeof fetch {
  return async (input, init = {}) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const method = init.method ?? 'GET';
    const headers = Object.fromEntries(new Headers(init.headers).entries());
    const body = typeof init.body === 'string' ? init.body : undefined;
    const signedHeaders = await signRequest({ method, url, headers, body }, { key, created: created() });
    return fetch(url, { ...init, headers: signedHeaders });
  };
}

/** The profile's covered components for a request, as a signer is told to cover them. */
function profileComponents(hasBody: boolean, signatureAgent: boolean): string[] {
  return [
    '@method',
    '@authority',
    '@target-uri',
    ...(hasBody ? ['content-digest'] : []),
    ...(signatureAgent ? ['signature-agent'] : []),
  ];
}

/**
 * The request's headers signed by web-bot-auth (npm), the web-bot-auth profile's reference signer,
 * at its defaults (label sig1, keyid the bare JWK thumbprint, a 64-byte nonce, tag="web-bot-auth",
 * `expires`) but for the covered components: the profile's, unless `components` names others.
 */
export async function webBotAuthHeaders(
  request: OutgoingRequest,
  key: ClientKey,
  created: Date,
  components?: string[],
): Promise<Record<string, string>> {
  const headers: Record<string, string> = { ...request.headers };
  const hasBody = request.body !== undefined && request.body !== '';
  if (hasBody) headers['content-digest'] = contentDigestOf(request.body as string);
  const signer = await signerFromJWK(key.privateKey.export({ format: 'jwk' }));
  const signed = await webBotAuth.signatureHeaders(
    { method: request.method, url: request.url, headers },
    signer,
    {
      created,
      expires: new Date(created.getTime() + 60_000),
      components: components ?? profileComponents(hasBody, headers['signature-agent'] !== undefined),
    },
  );
  return { ...headers, 'signature-input': signed['Signature-Input'], signature: signed.Signature };
}

/** A fetch that signs every request with web-bot-auth (for the MCP SDK client). */
export function webBotAuthFetch(key: ClientKey, created: () => Date): typeof fetch {
  return async (input, init = {}) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const method = init.method ?? 'GET';
    const headers = Object.fromEntries(new Headers(init.headers).entries());
    const body = typeof init.body === 'string' ? init.body : undefined;
    const signedHeaders = await webBotAuthHeaders({ method, url, headers, body }, key, created());
    return fetch(url, { ...init, headers: signedHeaders });
  };
}
