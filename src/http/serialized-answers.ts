// Answers kept serialized (hot public reads): built once, sent as UTF-8 bytes, or gzipped to a
// client that accepts gzip.
import { gzipSync } from 'node:zlib';

/** Below this a gzipped answer saves less than its extra headers cost. */
const GZIP_FROM_BYTES = 1024;

/**
 * Below this an answer is also kept as text, and REST sends the text: node:http writes a text body
 * together with its headers in one piece, where bytes go as a second chunk of a writev. For a body
 * this small the copy costs less than the second chunk (about 1.5 µs a request for setup-check's
 * 773 bytes, docs/decisions.md, "HTTP"); for larger ones the bytes are cheaper.
 */
const TEXT_BELOW_BYTES = 1024;

/**
 * The gzipped form of a cached answer, made the first time a client accepts it and kept while the
 * answer is (so compression costs once per cached answer, not once per request). Undefined when the
 * answer is too small to be worth it.
 */
function gzipOnce(bytes: Buffer): (() => Buffer) | undefined {
  if (bytes.length < GZIP_FROM_BYTES) return undefined;
  let gzipped: Buffer | undefined;
  return () => {
    gzipped ??= gzipSync(bytes);
    return gzipped;
  };
}

/** Whether an Accept-Encoding header (RFC 9110 §12.5.3) takes gzip: named, or `*`, with q > 0. */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  let wildcard = false;
  for (const item of header.split(',')) {
    const [coding, ...parameters] = item.split(';');
    const name = coding.trim().toLowerCase();
    if (name !== 'gzip' && name !== 'x-gzip' && name !== '*') continue;
    let weight = 1;
    for (const parameter of parameters) {
      const [key, value] = parameter.split('=');
      if (key.trim().toLowerCase() === 'q') weight = Number(value?.trim());
    }
    const accepted = weight > 0;
    if (name !== '*') return accepted;
    wildcard = accepted;
  }
  return wildcard;
}

const VARY = { vary: 'accept-encoding' };
const GZIPPED = { 'content-encoding': 'gzip', vary: 'accept-encoding' };

export interface Answer<Body> {
  body: Body;
  bytes: Buffer;
  /** The same UTF-8 JSON as text (small answers only). */
  text?: string;
  /** Gzipped once, the first time a client accepts it (large answers only). */
  gzipped?: () => Buffer;
}

/** A body serialized once: its UTF-8 bytes, and the same as text when it is small. */
export function serialize(body: unknown): { bytes: Buffer; text?: string } {
  const text = JSON.stringify(body);
  const bytes = Buffer.from(text);
  return bytes.length < TEXT_BELOW_BYTES ? { bytes, text } : { bytes };
}

const serialized = new WeakMap<object, Answer<unknown>>();

/**
 * The answer built from a reused read, serialized once: while `source` (an object BriefReuse in
 * storage/brief-reuse.ts hands out again and again) lives, every request gets the same body and
 * the same bytes (plain, gzipped).
 */
export function answerOf<Body>(source: object, build: () => Body): Answer<Body> {
  let answer = serialized.get(source) as Answer<Body> | undefined;
  if (!answer) {
    const body = build();
    const forms = serialize(body);
    answer = { body, ...forms, gzipped: gzipOnce(forms.bytes) };
    serialized.set(source, answer);
  }
  return answer;
}

export interface SerializedAnswer {
  bytes?: Buffer;
  text?: string;
  gzipped?: () => Buffer;
}

/**
 * What REST sends for an answer the handler had serialized: its gzipped bytes when it has them and
 * the client accepts gzip, else its UTF-8 bytes (as text when it has them as text); `Vary` whenever
 * the choice was open.
 * Undefined when the answer was not serialized ahead (the surface serializes the body itself).
 */
export function serializedPayload(
  answer: SerializedAnswer,
  acceptEncoding: string | undefined,
): { payload: Buffer | string; headers?: Record<string, string> } | undefined {
  const plain = answer.bytes;
  if (plain === undefined) return undefined;
  if (!answer.gzipped) return { payload: answer.text ?? plain };
  if (!acceptsGzip(acceptEncoding)) return { payload: plain, headers: VARY };
  return { payload: answer.gzipped(), headers: GZIPPED };
}
