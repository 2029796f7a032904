import { readFile } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { outboundFetch } from '../../outbound.ts';
import { type Format, formatOf, type ParsedDocument } from './document.ts';
import { readPdf } from './pdf-reader.ts';
import { looksLikeRfc, readRfc } from './rfc-reader.ts';
import { readMarkdown, readPlainText } from './text-readers.ts';

/** The bytes of a corpus file or URL, where they came from, and what format they are in. */
export interface Fetched {
  /** The absolute path or the URL: the document's identity (re-adding it replaces it). */
  origin: string;
  /** Shown when the document names no title of its own. */
  fallbackTitle: string;
  url?: string;
  bytes: Buffer;
  format: Format;
}

export function isUrl(target: string): boolean {
  return /^https?:\/\//i.test(target);
}

/** A scheme of two letters or more: `C:` stays a path, `file:`, `ftp:` or `javascript:` is a URL. */
const SCHEME = /^([a-z][a-z0-9+.-]+):/i;

/**
 * Why a target that names a URL cannot be read (other schemes, or an http(s) URL that does not parse
 * or names no host), in one line; undefined for a readable http(s) URL and for a path.
 */
export function refusedUrl(target: string): string | undefined {
  const scheme = SCHEME.exec(target)?.[1];
  if (!scheme) return undefined;
  if (!/^https?$/i.test(scheme)) {
    return `${target}: only http and https URLs are read (a local file is given by its path)`;
  }
  const url = URL.parse(target);
  if (!url?.hostname || !isUrl(target)) return `${target}: not a valid URL`;
  return undefined;
}

/** How a corpus URL is fetched (from the research settings: CORPUS_ALLOW_PRIVATE_URLS, CORPUS_MAX_BYTES). */
export interface SourcePolicy {
  allowPrivateUrls: boolean;
  maxDocumentBytes: number;
  timeoutMs?: number;
}

export async function fetchSource(target: string, policy: SourcePolicy): Promise<Fetched> {
  const refused = refusedUrl(target);
  if (refused) throw new Error(refused);
  if (isUrl(target)) {
    const response = await outboundFetch(
      target,
      {},
      {
        timeoutMs: policy.timeoutMs ?? 30_000,
        maxBytes: policy.maxDocumentBytes,
        privateAddresses: policy.allowPrivateUrls,
      },
    );
    if (!response.ok) throw new Error(`${target}: HTTP ${response.status}`);
    const bytes = Buffer.from(await response.arrayBuffer());
    const name = decodeURIComponent(new URL(target).pathname.split('/').filter(Boolean).pop() ?? target);
    return {
      origin: target,
      fallbackTitle: name,
      url: target,
      bytes,
      format: formatOf(target, response.headers.get('content-type') ?? undefined),
    };
  }
  const path = resolve(target);
  return {
    origin: path,
    fallbackTitle: basename(path),
    bytes: await readFile(path),
    format: formatOf(path),
  };
}

export async function parseSource(fetched: Fetched): Promise<ParsedDocument> {
  if (fetched.format === 'pdf') return readPdf(fetched.bytes);
  const text = fetched.bytes.toString('utf8');
  // The HTML parser is loaded by the first HTML source, not by every instance.
  if (fetched.format === 'html') return (await import('./html-reader.ts')).readHtml(text);
  if (fetched.format === 'markdown') return readMarkdown(text);
  return looksLikeRfc(text) ? readRfc(text) : readPlainText(text);
}
