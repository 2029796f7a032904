import { createHash, createPublicKey, type KeyObject } from 'node:crypto';
import signatures from 'http-message-signatures';
import { type InnerList, isInnerList, parseDictionary, serializeInnerList } from 'structured-headers';

/**
 * The parts of RFC 9421 and RFC 9530 the signature step uses, apart from the profile's rules: the
 * signature base (as http-message-signatures builds it, which passes RFC 9421 B.2.6 byte for byte,
 * test/signed-requests-rfc.test.ts), the Content-Digest check, and Ed25519 keys from their JWK `x`.
 */

/** What a signature base is built from: the request as the client addressed it. */
export interface SignedMessage {
  method: string;
  /** The full target URI: scheme, authority, path and query. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
}

/**
 * RFC 9421 §2.5: one line per covered component, then `"@signature-params"` with the inner list as
 * sent. Built by the library, for any components: the reference profileSignatureBase is tested against.
 */
export function signatureBase(message: SignedMessage, input: InnerList): string {
  const fields = input[0].map(([name]) => String(name));
  const base = signatures.httpbis.createSignatureBase(
    { fields },
    message as { method: string; url: string; headers: Record<string, string | string[]> },
  );
  base.push(['"@signature-params"', [serializeInnerList(input)]]);
  return signatures.httpbis.formatSignatureBase(base);
}

/** What the profile's signature base is built from: the request as judged (signature-authority.ts). */
export interface ProfileMessage {
  method: string;
  /** `@authority`, normalized (lowercase, no default port): the one `url` names. */
  authority: string;
  /** `@target-uri`: scheme, authority, path and query. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
}

/**
 * The signature base of a request whose covered components are the profile's (signature-rules.ts
 * admits no others, and none with parameters), written out line by line: the same bytes as
 * signatureBase gives for them (test/signed-requests-rfc.test.ts), without the library's parsing
 * of every component name twice and of the URL, which cost a fifth of the verification's time.
 */
export function profileSignatureBase(message: ProfileMessage, input: InnerList): string {
  let base = '';
  for (const [name] of input[0]) base += `"${String(name)}": ${componentValue(String(name), message)}\n`;
  return `${base}"@signature-params": ${signatureParams(input)}`;
}

/**
 * The inner list serialized (RFC 9651 §4.1.1), written out for what the profile admits (components
 * with no parameters; parameters that are integers or strings): structured-headers' serializer,
 * which checks and dispatches every member, took a third as long as the rest of the base.
 */
function signatureParams(input: InnerList): string {
  let text = '(';
  for (const [index, [name, params]] of input[0].entries()) {
    if (params.size > 0 || typeof name !== 'string') return serializeInnerList(input);
    text += index === 0 ? quoted(name) : ` ${quoted(name)}`;
  }
  text += ')';
  for (const [name, value] of input[1]) {
    if (typeof value === 'string') text += `;${name}=${quoted(value)}`;
    else if (Number.isInteger(value)) text += `;${name}=${value}`;
    else return serializeInnerList(input);
  }
  return text;
}

/** An sf-string (the parser has checked that it holds printable ASCII only). */
function quoted(value: string): string {
  // Most values need no escape; testing for one costs less than a replace that finds none.
  return NEEDS_ESCAPE.test(value) ? `"${value.replace(/[\\"]/g, '\\$&')}"` : `"${value}"`;
}

const NEEDS_ESCAPE = /[\\"]/;

function componentValue(name: string, message: ProfileMessage): string {
  if (name === '@method') return message.method.toUpperCase();
  if (name === '@authority') return message.authority;
  if (name === '@target-uri') return message.url;
  const value = message.headers[name];
  // RFC 9421 §2.1: each field line's value trimmed, several joined with ", ".
  if (Array.isArray(value)) return value.map((line) => line.trim()).join(', ');
  if (value === undefined) throw new Error(`the covered header ${name} is not in the request`);
  return value.trim();
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
