import { MS } from '../../clock.ts';
import { randomId } from '../../secrets.ts';
import { oauthClients } from '../../storage/oauth-clients.ts';
import type { OAuthClientsTable } from '../../storage/schema.ts';
import { sanitizeText } from '../feedback/sanitize.ts';
import type { Clocked, Store } from '../ports.ts';

/** A registration that never got a code is forgotten after a day (the endpoint is open to anyone). */
export const UNUSED_CLIENT_TTL_MS = MS.day;
const MAX_REDIRECT_URIS = 10;
const MAX_URI_LENGTH = 500;

/** A client as the authorization endpoint sees it, registered here or described by its metadata document. */
export interface OAuthClient {
  clientId: string;
  /** Chosen by the client itself: shown to the member as unverified. */
  clientName: string | null;
  redirectUris: string[];
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

export function isLoopbackRedirect(url: URL): boolean {
  return url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
}

/**
 * Why a redirect URI cannot be registered, or undefined when it can (OAuth 2.1 §2.3.1, RFC 8252):
 * https anywhere, http only to a loopback address, or a private-use scheme of a native app
 * (`com.example.app:/cb`, `cursor://…`); never a fragment, never javascript: or data:.
 */
export function redirectUriProblem(raw: unknown): string | undefined {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > MAX_URI_LENGTH)
    return `a redirect URI is a string of 1 to ${MAX_URI_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `${raw.slice(0, 100)} is not an absolute URL`;
  }
  if (url.hash) return 'a redirect URI has no fragment';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:')
    return isLoopbackRedirect(url) ? undefined : 'http redirect URIs must point at a loopback address';
  if (['javascript:', 'data:', 'file:', 'blob:', 'about:', 'vbscript:'].includes(url.protocol))
    return `the ${url.protocol} scheme cannot receive a code`;
  return undefined;
}

/**
 * Exact string match (OAuth 2.1 §4.1.3), except that a loopback redirect may name any port: a native
 * app gets whatever port is free when it runs (RFC 8252 §7.3).
 */
export function redirectMatches(registered: readonly string[], presented: string): boolean {
  if (registered.includes(presented)) return true;
  let candidate: URL;
  try {
    candidate = new URL(presented);
  } catch {
    return false;
  }
  if (!isLoopbackRedirect(candidate)) return false;
  return registered.some((entry) => {
    const known = new URL(entry);
    if (!isLoopbackRedirect(known)) return false;
    known.port = candidate.port;
    return known.href === candidate.href;
  });
}

export interface Registration {
  clientName?: string;
  redirectUris: string[];
  /** A client of the device grant only: it never redirects, so it may list no redirect URI. */
  withoutRedirects?: boolean;
}

export type RegistrationResult =
  | { ok: true; client: OAuthClientsTable }
  | { ok: false; error: 'invalid_redirect_uri' | 'invalid_client_metadata'; description: string };

/** RFC 7591 registration of a public client; unused registrations older than a day are swept here. */
export async function registerClient(
  deps: Store & Clocked,
  registration: Registration,
): Promise<RegistrationResult> {
  const { redirectUris } = registration;
  const fewest = registration.withoutRedirects ? 0 : 1;
  if (!Array.isArray(redirectUris) || redirectUris.length < fewest || redirectUris.length > MAX_REDIRECT_URIS)
    return {
      ok: false,
      error: 'invalid_redirect_uri',
      description: `redirect_uris lists ${fewest} to ${MAX_REDIRECT_URIS} URIs`,
    };
  for (const uri of redirectUris) {
    const problem = redirectUriProblem(uri);
    if (problem) return { ok: false, error: 'invalid_redirect_uri', description: problem };
  }
  const now = deps.clock.now();
  await oauthClients.deleteUnusedBefore(deps.db, now - UNUSED_CLIENT_TTL_MS);
  const name =
    registration.clientName === undefined ? '' : sanitizeText(registration.clientName).slice(0, 80);
  const client: OAuthClientsTable = {
    client_id: randomId('mcpc', 16),
    client_name: name || null,
    redirect_uris: JSON.stringify([...new Set(redirectUris)]),
    created_at: now,
    used_at: null,
  };
  await oauthClients.insert(deps.db, client);
  return { ok: true, client };
}

/** A registered client, unless it is unknown or was never used within a day of registering. */
export async function findRegisteredClient(
  deps: Store & Clocked,
  clientId: string,
): Promise<OAuthClient | undefined> {
  if (clientId.length > 100) return undefined;
  const row = await oauthClients.byId(deps.db, clientId);
  if (!row) return undefined;
  if (row.used_at === null && deps.clock.now() - Number(row.created_at) > UNUSED_CLIENT_TTL_MS)
    return undefined;
  return {
    clientId: row.client_id,
    clientName: row.client_name,
    redirectUris: JSON.parse(row.redirect_uris) as string[],
  };
}

export async function markClientUsed(deps: Store & Clocked, clientId: string): Promise<void> {
  await oauthClients.markUsed(deps.db, clientId, deps.clock.now());
}
