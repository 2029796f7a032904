import { OutboundError, outboundFetch } from '../../outbound.ts';
import { sanitizeText } from '../feedback/sanitize.ts';
import { isLoopbackRedirect, type OAuthClient, redirectUriProblem } from './oauth-clients.ts';

/** A metadata document is a few hundred bytes; anything near this is not one. */
const MAX_DOCUMENT_BYTES = 16 * 1024;
const FETCH_TIMEOUT_MS = 5_000;
/** Kept this long when the document's answer says nothing of caching, and never longer than a day. */
const DEFAULT_CACHE_MS = 5 * 60_000;
const MAX_CACHE_MS = 24 * 60 * 60_000;
const MAX_CACHED_DOCUMENTS = 500;

export interface DocumentPolicy {
  /** Loopback, private and link-local addresses, and http on loopback (development and tests). */
  allowPrivate: boolean;
}

/**
 * Whether a client_id is the URL of a client ID metadata document (draft-ietf-oauth-client-id-
 * metadata-document, MCP 2025-11-25): https with a path, no fragment, no credentials; with
 * `allowPrivate`, http to a loopback address too.
 */
export function isClientDocumentUrl(clientId: string, policy: DocumentPolicy): boolean {
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    return false;
  }
  if (url.hash || url.username || url.password || url.pathname === '/' || clientId.length > 500) return false;
  // No dot segments (the draft's §3): URL parsing would resolve them, so the raw string is read.
  if (/\/\.{1,2}(\/|\?|$)/.test(clientId.replace(/^[a-z]+:\/\/[^/]*/i, ''))) return false;
  return url.protocol === 'https:' || (policy.allowPrivate && isLoopbackRedirect(url));
}

export type DocumentResult = { ok: true; client: OAuthClient } | { ok: false; problem: string };

/**
 * Documents fetched and accepted, kept as their answer's Cache-Control allows (no-store and no-cache:
 * not kept; max-age: that long; nothing said: five minutes), never longer than a day, at most 500 of
 * them (the oldest goes first). A refused document is not kept: the host may be fixing it.
 */
export class ClientDocumentCache {
  private readonly entries = new Map<string, { client: OAuthClient; until: number }>();

  get(clientId: string, now: number): OAuthClient | undefined {
    const entry = this.entries.get(clientId);
    if (!entry) return undefined;
    if (entry.until > now) return entry.client;
    this.entries.delete(clientId);
    return undefined;
  }

  keep(clientId: string, client: OAuthClient, now: number, cacheControl: string | null): void {
    const lifetime = cacheLifetime(cacheControl);
    if (lifetime <= 0) return;
    this.entries.delete(clientId);
    this.entries.set(clientId, { client, until: now + lifetime });
    while (this.entries.size > MAX_CACHED_DOCUMENTS) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
  }
}

function cacheLifetime(cacheControl: string | null): number {
  if (!cacheControl) return DEFAULT_CACHE_MS;
  const directives = cacheControl
    .toLowerCase()
    .split(',')
    .map((part) => part.trim());
  if (directives.some((d) => d === 'no-store' || d === 'no-cache' || d === 'private')) return 0;
  const maxAge = directives.find((d) => d.startsWith('max-age='));
  if (!maxAge) return DEFAULT_CACHE_MS;
  const seconds = Number(maxAge.slice('max-age='.length));
  return Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds * 1000, MAX_CACHE_MS) : 0;
}

/** The document from the cache when it is still fresh there, else fetched (and kept when it may be). */
export async function clientFromDocument(
  clientId: string,
  policy: DocumentPolicy,
  cache: ClientDocumentCache,
  now: number,
): Promise<DocumentResult> {
  const cached = cache.get(clientId, now);
  if (cached) return { ok: true, client: cached };
  const fetched = await fetchClientDocument(clientId, policy);
  if (fetched.ok) cache.keep(clientId, fetched.client, now, fetched.cacheControl ?? null);
  return fetched;
}

/**
 * Fetches and checks a client's metadata document through the outbound guards (a deadline, a size
 * cap, no redirect, and no private address unless allowed, checked on the address connected to).
 * The document must name itself as client_id, list its redirect URIs, and be a public client.
 */
export async function fetchClientDocument(
  clientId: string,
  policy: DocumentPolicy,
): Promise<DocumentResult & { cacheControl?: string | null }> {
  let text: string;
  let cacheControl: string | null;
  try {
    const response = await outboundFetch(
      clientId,
      { headers: { accept: 'application/json' } },
      {
        timeoutMs: FETCH_TIMEOUT_MS,
        maxBytes: MAX_DOCUMENT_BYTES,
        maxRedirects: 0,
        privateAddresses: policy.allowPrivate,
      },
    );
    if (response.status !== 200)
      return { ok: false, problem: `its metadata document answered ${response.status}` };
    text = await response.text();
    cacheControl = response.headers.get('cache-control');
  } catch (error) {
    if (error instanceof OutboundError)
      return { ok: false, problem: `its metadata document: ${error.message}` };
    throw error;
  }
  let document: Record<string, unknown>;
  try {
    document = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return { ok: false, problem: 'its metadata document is not JSON' };
  }
  if (!document || typeof document !== 'object' || Array.isArray(document))
    return { ok: false, problem: 'its metadata document is not a JSON object' };
  if (document.client_id !== clientId)
    return { ok: false, problem: 'its metadata document names another client_id' };
  if ('client_secret' in document || (document.token_endpoint_auth_method ?? 'none') !== 'none')
    return {
      ok: false,
      problem: 'its metadata document is not a public client (token_endpoint_auth_method none)',
    };
  const redirectUris = document.redirect_uris;
  if (!Array.isArray(redirectUris) || redirectUris.length === 0 || redirectUris.length > 10)
    return { ok: false, problem: 'its metadata document lists no redirect_uris' };
  for (const uri of redirectUris) {
    const problem = redirectUriProblem(uri);
    if (problem) return { ok: false, problem: `its metadata document: ${problem}` };
  }
  const name =
    typeof document.client_name === 'string' ? sanitizeText(document.client_name).slice(0, 80) : '';
  return {
    ok: true,
    client: { clientId, clientName: name || null, redirectUris: redirectUris as string[] },
    cacheControl,
  };
}
