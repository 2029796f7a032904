import { createHash, createPublicKey, type KeyObject } from 'node:crypto';
import signatures from 'http-message-signatures';
import { type InnerList, isInnerList, parseDictionary, serializeInnerList } from 'structured-headers';

/**
 * The parts of RFC 9421 and RFC 9530 the signature step uses, apart from the profile's rules: the
 * signature base (built by http-message-signatures, which passes RFC 9421 B.2.6 byte for byte,
 * test/signed-requests-rfc.test.ts), the Content-Digest check, and Ed25519 keys from their JWK `x`.
 */

/** What a signature base is built from: the request as the client addressed it. */
export interface SignedMessage {
  method: string;
  /** The full target URI: scheme, authority, path and query. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
}

/** RFC 9421 §2.5: one line per covered component, then `"@signature-params"` with the inner list as sent. */
export function signatureBase(message: SignedMessage, input: InnerList): string {
  const fields = input[0].map(([name]) => String(name));
  const base = signatures.httpbis.createSignatureBase(
    { fields },
    message as { method: string; url: string; headers: Record<string, string | string[]> },
  );
  base.push(['"@signature-params"', [serializeInnerList(input)]]);
  return signatures.httpbis.formatSignatureBase(base);
}

const DIGESTS: Record<string, string> = { 'sha-256': 'sha256', 'sha-512': 'sha512' };

/**
 * RFC 9530: undefined when the Content-Digest matches the body's bytes; otherwise why not. Every
 * digest we know (sha-256, sha-512) that is present must match, and at least one must be present.
 */
export function contentDigestProblem(header: string | undefined, body: string): string | undefined {
  if (header === undefined) return 'the Content-Digest header is missing (RFC 9530, sha-256)';
  let digests: ReturnType<typeof parseDictionary>;
  try {
    digests = parseDictionary(header);
  } catch {
    return 'Content-Digest is not a structured-field dictionary (RFC 9651)';
  }
  let checked = 0;
  for (const [name, algorithm] of Object.entries(DIGESTS)) {
    const digest = digests.get(name);
    if (digest === undefined) continue;
    if (isInnerList(digest) || !(digest[0] instanceof ArrayBuffer))
      return `Content-Digest ${name} must be a byte sequence`;
    const actual = createHash(algorithm).update(body, 'utf8').digest();
    if (!actual.equals(Buffer.from(digest[0]))) return 'Content-Digest does not match the body';
    checked++;
  }
  return checked === 0 ? 'Content-Digest carries no sha-256 digest' : undefined;
}

/** `Content-Digest` for a body, as a client sends it. */
export function contentDigestOf(body: string | Buffer): string {
  return `sha-256=:${createHash('sha256').update(body).digest('base64')}:`;
}

const MAX_KEYS = 10_000;
const keys = new Map<string, KeyObject>();

/** The Ed25519 public key of a JWK `x`, made once per key (a bound key is used on every call). */
export function ed25519PublicKey(x: string): KeyObject {
  let key = keys.get(x);
  if (key) return key;
  key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
  if (keys.size >= MAX_KEYS) keys.clear();
  keys.set(x, key);
  return key;
}
