import { generateKeyPairSync, type KeyObject, randomUUID, sign } from 'node:crypto';
import signatures from 'http-message-signatures';
import { keyIdOf } from '../../src/domain/auth/signing-keys.ts';
import { contentDigestOf } from '../../src/operations/pipeline/signature-base.ts';

/**
 * A client's side of signed requests, signed by a third party: http-message-signatures (npm) builds
 * Signature-Input and Signature; only the key pair and the Content-Digest are made here.
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
