import { randomBytes } from 'node:crypto';
import { MS } from '../../clock.ts';
import { deriveFromSecret, sha256 } from '../../secrets.ts';
import { oidcLogins } from '../../storage/oidc-logins.ts';
import type { Clocked, Store } from '../ports.ts';

export const OIDC_LOGIN_COOKIE = '__oidc_login';
export const OIDC_LOGIN_TTL_MS = 10 * MS.minute;

/**
 * The secrets of one login through the provider. `browserSecret` lives only in a short-lived
 * HttpOnly cookie and never travels in a URL; the nonce and the PKCE verifier are derived from it, so
 * a callback URL that leaks (logs, Referer) is useless in another browser. `state` travels in URLs.
 */
export interface OidcLoginSecrets {
  browserSecret: string;
  state: string;
  nonce: string;
  codeVerifier: string;
}

export function newOidcLoginSecrets(): OidcLoginSecrets {
  return secretsFor(randomBytes(32).toString('base64url'), randomBytes(32).toString('base64url'));
}

function secretsFor(browserSecret: string, state: string): OidcLoginSecrets {
  return {
    browserSecret,
    state,
    nonce: deriveFromSecret(browserSecret, 'oidc nonce'),
    codeVerifier: deriveFromSecret(browserSecret, 'oidc pkce verifier'),
  };
}

/** Remembers a login until its callback: only hashes, the page to return to, and an expiry. */
export async function storeOidcLogin(
  deps: Store & Clocked,
  secrets: OidcLoginSecrets,
  next: string,
): Promise<void> {
  const now = deps.clock.now();
  // Logins that were never finished would otherwise pile up: each start sweeps the expired ones.
  await oidcLogins.deleteEnded(deps.db, now);
  await oidcLogins.insert(deps.db, {
    state_hash: sha256(secrets.state),
    browser_hash: sha256(secrets.browserSecret),
    next_path: next,
    created_at: now,
    expires_at: now + OIDC_LOGIN_TTL_MS,
    used_at: null,
  });
}

/**
 * Spends the login whose `state` came back, once (even under concurrent callbacks), and only in the
 * browser that started it. Returns its secrets and the page to return to, or undefined for an
 * unknown, expired, replayed or foreign-browser callback.
 */
export async function spendOidcLogin(
  deps: Store & Clocked,
  state: string,
  browserSecret: string,
): Promise<{ secrets: OidcLoginSecrets; next: string } | undefined> {
  if (state.length > 200 || browserSecret.length > 200) return undefined;
  const now = deps.clock.now();
  const next = await oidcLogins.spend(deps.db, sha256(state), sha256(browserSecret), now);
  return next === undefined ? undefined : { secrets: secretsFor(browserSecret, state), next };
}
