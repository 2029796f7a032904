import { type Dictionary, type InnerList, type Item, parseDictionary } from 'structured-headers';

/**
 * The strict profile's rules (reference §7), each refusal with the reason the 401 carries. The
 * constants are the profile itself: the discovery documents describe it from them
 * (src/surfaces/signing-profile.ts).
 */

export const SIGNATURE_LABEL = 'sig1';
export const SIGNATURE_ALGORITHM = 'ed25519';
/** How far `created` may be from the server's clock, either way (reference §7). */
export const FRESHNESS_SECONDS = 60;
export const COMPONENTS_WITHOUT_BODY = ['@method', '@authority', '@target-uri'] as const;
export const COMPONENTS_WITH_BODY = [...COMPONENTS_WITHOUT_BODY, 'content-digest'] as const;
/**
 * The web-bot-auth profile (draft-meunier-web-bot-auth-architecture): its agent names its key
 * directory in `Signature-Agent` and covers that header. The service does not use the directory (the
 * key is the one bound to the token), so covering it is allowed and changes nothing.
 */
export const SIGNATURE_AGENT = 'signature-agent';
/** The one `tag` accepted: web-bot-auth's. A signature tagged for another application is not ours. */
export const WEB_BOT_AUTH_TAG = 'web-bot-auth';
const PARAMETERS = ['created', 'expires', 'nonce', 'alg', 'keyid', 'tag'];
const NONCE_MAX = 256;
const KEY_ID_PREFIX = 'kid_';

/** A refusal with its reason; the step turns it into the 401. */
export class Refused extends Error {}

export function refuse(reason: string): never {
  throw new Refused(reason);
}

export function joined(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

export function dictionary(value: string, name: string): Dictionary {
  try {
    return parseDictionary(value);
  } catch {
    return refuse(`${name} is not a structured-field dictionary (RFC 9651)`);
  }
}

export function member(fields: Dictionary, name: string): Item | InnerList {
  const value = fields.get(SIGNATURE_LABEL);
  if (value === undefined) refuse(`${name} has no signature labelled ${SIGNATURE_LABEL}`);
  return value;
}

/**
 * The usual Signature-Input: one member under the profile's label, its components plain names
 * (lowercase field names or derived components) with no parameters, one space apart, and its
 * parameters integers or strings without escapes. Anything else takes the structured-field parser.
 */
const PLAIN_INPUT = new RegExp(
  `^${SIGNATURE_LABEL}=\\((?:("[a-z0-9@_.-]+"(?: "[a-z0-9@_.-]+")*))?\\)((?:;[a-z*][a-z0-9_.*-]*=(?:"[\\x20\\x21\\x23-\\x5b\\x5d-\\x7e]*"|[0-9]{1,15}))*)$`,
);
const PLAIN_COMPONENT = /"([^"]+)"/g;
const PLAIN_PARAMETER = /;([^=]+)=(?:"([^"]*)"|([0-9]+))/g;

/**
 * The Signature-Input member under the profile's label, as the structured-field parser reads it
 * (test/signed-requests-rfc.test.ts holds them equal). The usual header is read with two regular
 * expressions: the parser, which checks every character of the header on its own, took as long as
 * the rest of the profile's checks and the signature base together.
 */
export function signatureInput(header: string): Item | InnerList {
  const plain = PLAIN_INPUT.exec(header);
  if (!plain) return member(dictionary(header, 'Signature-Input'), 'Signature-Input');
  // exec on the module's own expressions rather than matchAll, which copies its expression on every call.
  const components: Item[] = [];
  const names = plain[1] ?? '';
  PLAIN_COMPONENT.lastIndex = 0;
  for (let found = PLAIN_COMPONENT.exec(names); found; found = PLAIN_COMPONENT.exec(names))
    components.push([found[1], new Map()]);
  const params = new Map<string, string | number>();
  PLAIN_PARAMETER.lastIndex = 0;
  for (let found = PLAIN_PARAMETER.exec(plain[2]); found; found = PLAIN_PARAMETER.exec(plain[2])) {
    const [, name, text, integer] = found;
    // A repeated parameter: the parser's rule (the last value, in the first one's place) applies.
    if (params.has(name)) return member(dictionary(header, 'Signature-Input'), 'Signature-Input');
    params.set(name, text ?? Number(integer));
  }
  return [components, params];
}

/** One Ed25519 signature under the profile's label, as signers send it: 64 bytes, base64 with padding. */
const LONE_SIGNATURE = new RegExp(`^${SIGNATURE_LABEL}=:([A-Za-z0-9+/]{86}==):$`);

/**
 * The bytes of the Signature header's member. The usual header (the one member, one signature) is
 * read with a regular expression and a base64 decode instead of the general structured-field
 * parser: the bytes are the same, and any other header goes through the parser.
 */
export function signatureBytes(header: string): Buffer {
  const lone = LONE_SIGNATURE.exec(header);
  if (lone) return Buffer.from(lone[1], 'base64');
  const signature = member(dictionary(header, 'Signature'), 'Signature');
  if (!(signature[0] instanceof ArrayBuffer)) refuse(`Signature ${SIGNATURE_LABEL} must be a byte sequence`);
  return Buffer.from(signature[0]);
}

export function checkParameters(
  params: Map<string, unknown>,
  keyId: string,
  now: number,
): { created: number; nonce?: string } {
  for (const name of params.keys())
    if (!PARAMETERS.includes(name))
      refuse(`the parameter ${name} is not part of the profile (${PARAMETERS.join(', ')})`);
  const alg = params.get('alg');
  if (alg === undefined) refuse(`alg is missing (the profile requires alg="${SIGNATURE_ALGORITHM}")`);
  if (alg !== SIGNATURE_ALGORITHM)
    refuse(`alg ${JSON.stringify(String(alg))} is not accepted: only "${SIGNATURE_ALGORITHM}"`);
  const keyid = params.get('keyid');
  if (keyid === undefined) refuse('keyid is missing');
  // The bound id is `kid_` + the RFC 7638 thumbprint; web-bot-auth sends the bare thumbprint.
  if (keyid !== keyId && `${KEY_ID_PREFIX}${keyid}` !== keyId)
    refuse(`keyid ${JSON.stringify(String(keyid))} is not the key bound to this token`);
  const tag = params.get('tag');
  if (tag !== undefined && tag !== WEB_BOT_AUTH_TAG)
    refuse(`tag ${JSON.stringify(String(tag))} is not accepted: only "${WEB_BOT_AUTH_TAG}", or none`);
  const created = params.get('created');
  if (created === undefined) refuse('created is missing');
  if (!Number.isInteger(created)) refuse('created must be an integer (seconds since the epoch)');
  const age = Math.floor(now / 1000) - (created as number);
  if (age > FRESHNESS_SECONDS)
    refuse(`created is ${age} s in the past (at most ${FRESHNESS_SECONDS} s accepted)`);
  if (-age > FRESHNESS_SECONDS)
    refuse(`created is ${-age} s in the future (at most ${FRESHNESS_SECONDS} s accepted)`);
  const expires = params.get('expires');
  if (expires !== undefined) {
    if (!Number.isInteger(expires)) refuse('expires must be an integer (seconds since the epoch)');
    const late = Math.floor(now / 1000) - (expires as number);
    if (late > 0) refuse(`the signature expired ${late} s ago`);
  }
  const nonce = params.get('nonce');
  if (nonce === undefined) return { created: created as number };
  if (typeof nonce !== 'string' || nonce === '' || nonce.length > NONCE_MAX)
    refuse(`nonce must be a string of 1 to ${NONCE_MAX} characters`);
  return { created: created as number, nonce };
}

/** `hasSignatureAgent`: the request carries a `Signature-Agent` header, which may then be covered. */
export function checkComponents(items: Item[], hasBody: boolean, hasSignatureAgent: boolean): void {
  const expected: readonly string[] = hasBody ? COMPONENTS_WITH_BODY : COMPONENTS_WITHOUT_BODY;
  const seen: string[] = [];
  for (const [name, params] of items) {
    if (typeof name !== 'string') refuse('covered components must be strings');
    if (params.size > 0) refuse(`the covered component "${name}" carries parameters; the profile takes none`);
    if (seen.includes(name)) refuse(`the covered component "${name}" appears twice`);
    if (name === SIGNATURE_AGENT) {
      if (!hasSignatureAgent)
        refuse(`the covered component "${SIGNATURE_AGENT}" is covered but the request has no such header`);
      seen.push(name);
      continue;
    }
    if (!expected.includes(name))
      refuse(
        name === 'content-digest'
          ? 'the covered component "content-digest" is covered but the request has no body'
          : `the covered component "${name}" is not part of the profile (${expected.join(' ')})`,
      );
    seen.push(name);
  }
  for (const name of expected)
    if (!seen.includes(name))
      refuse(`the covered component "${name}" is missing (the profile covers ${expected.join(' ')})`);
}
