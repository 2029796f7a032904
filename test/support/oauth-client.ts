import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import type { Browser } from './browser.ts';

/** A PKCE pair (RFC 7636, S256). */
export function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** RFC 7591 registration, as an MCP host sends it. */
export async function registerClient(baseUrl: string, metadata: Record<string, unknown>) {
  const response = await fetch(`${baseUrl}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(metadata),
  });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

/** The token endpoint, form-encoded as RFC 6749 says. */
export async function tokenRequest(baseUrl: string, form: Record<string, string>) {
  const response = await fetch(`${baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

/** The query of a redirect's Location header. */
export function locationParams(location: string | null): URLSearchParams {
  assert.ok(location, 'a redirect');
  return new URL(location, 'http://relative.invalid').searchParams;
}

/** GET /oauth/authorize in a signed-in cookie browser; returns the consent link's request secret. */
export async function authorize(browser: Browser, params: Record<string, string>) {
  const answer = await browser.request('GET', `/oauth/authorize?${new URLSearchParams(params)}`);
  return answer;
}

export function consentSecret(location: string | null): string {
  const prefix = '/oauth/consent?request=';
  if (!location?.startsWith(prefix)) assert.fail(`consent redirect expected, got ${location}`);
  return location.slice(prefix.length);
}
