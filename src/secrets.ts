import crypto, { createHash, createHmac, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';

export const TOKEN_PREFIX = 'agt_';
const TOKEN_BODY = /^[A-Za-z0-9_-]{43}$/;

// crypto.hash is the one-shot form (Node 20.12+), about twice as fast as createHash on the hot path.
const oneShotHash = (crypto as { hash?: (algorithm: string, data: string, encoding: 'hex') => string }).hash;

export function sha256(value: string): string {
  return oneShotHash ? oneShotHash('sha256', value, 'hex') : createHash('sha256').update(value).digest('hex');
}

/**
 * A value for one purpose derived from a secret (HMAC-SHA-256, base64url): it shows nothing of the
 * secret, and each purpose gets its own, so one derived value cannot stand in for another.
 */
export function deriveFromSecret(secret: string, purpose: string): string {
  return createHmac('sha256', secret).update(purpose).digest('base64url');
}

export function newAgentToken(): string {
  return TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

/** True when the string has the exact agt_ shape (32 bytes of unpadded base64url). */
export function isWellFormedToken(value: string): boolean {
  return value.startsWith(TOKEN_PREFIX) && TOKEN_BODY.test(value.slice(TOKEN_PREFIX.length));
}

/** The part of a token that is safe to show again: enough to tell tokens apart, useless to an attacker. */
export function tokenDisplayPrefix(token: string): string {
  return token.slice(0, TOKEN_PREFIX.length + 6);
}

const RANDOM_POOL_BYTES = 4096;
let randomPool = Buffer.alloc(0);
let poolOffset = 0;

/**
 * Hex of `bytes` random bytes taken from a pooled 4 KB buffer of crypto.randomBytes, refilled when
 * spent (bytes are never handed out twice). Each small synchronous randomBytes call goes into
 * OpenSSL on its own, several µs on the hot path; this one runs on every agent call. For row ids,
 * not secrets.
 */
export function pooledRandomHex(bytes: number): string {
  if (bytes > RANDOM_POOL_BYTES) return randomBytes(bytes).toString('hex');
  if (poolOffset + bytes > randomPool.length) {
    randomPool = randomBytes(RANDOM_POOL_BYTES);
    poolOffset = 0;
  }
  const hex = randomPool.toString('hex', poolOffset, poolOffset + bytes);
  poolOffset += bytes;
  return hex;
}

export function randomId(prefix: string, bytes = 12): string {
  return `${prefix}_${randomBytes(bytes).toString('hex')}`;
}

export function newDeviceCode(): string {
  return randomBytes(32).toString('base64url');
}

/** Consonants only (no words, no digits to confuse with letters): 20 symbols, 8 of them ≈ 34.6 bits. */
const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';

export function newUserCode(): string {
  let code = '';
  for (let i = 0; i < 8; i++) code += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/** Case, spaces and dashes do not matter when a human types the code. */
export function normalizeUserCode(input: string): string {
  const bare = input.toUpperCase().replace(/[^A-Z0-9]/g, '');
  return bare.length === 8 ? `${bare.slice(0, 4)}-${bare.slice(4)}` : bare;
}

export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
