import { OutboundError, outboundFetch } from '../../outbound.ts';
import { sanitizeText } from '../feedback/sanitize.ts';
import { isLoopbackRedirect, type OAuthClient, redirectUriProblem } from './oauth-clients.ts';

/** A metadata document is a few hundred bytes; anything near this is not one. */
const MAX_DOCUMENT_BYTES = 16 * 1024;
const FETCH_TIMEOUT_MS = 5_000;

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
  return url.protocol === 'https:' || (policy.allowPrivate && isLoopbackRedirect(url));
}

export type DocumentResult = { ok: true; client: OAuthClient } | { ok: false; problem: string };

/**
 * Fetches and checks a client's metadata document through the outbound guards (a deadline, a size
 * cap, no redirect, and no private address unless allowed, checked on the address connected to).
 * The document must name itself as client_id, list its redirect URIs, and be a public client.
 */
export async function fetchClientDocument(clientId: string, policy: DocumentPolicy): Promise<DocumentResult> {
  let text: string;
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
  return { ok: true, client: { clientId, clientName: name || null, redirectUris: redirectUris as string[] } };
}
