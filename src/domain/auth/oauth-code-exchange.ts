import { createHash } from 'node:crypto';
import { constantTimeEqual, sha256 } from '../../secrets.ts';
import { oauthAuthorizations } from '../../storage/oauth-authorizations.ts';
import { oauthClients } from '../../storage/oauth-clients.ts';
import { transact, type WritePort } from '../../storage/transactions.ts';
import type { Tiered } from '../access/tiers.ts';
import type { Clocked, Store } from '../ports.ts';
import { mintConsentedToken } from './consented-token.ts';
import { revokeToken } from './tokens.ts';

/** RFC 7636 §4.6: BASE64URL(SHA256(verifier)); the verifier is 43 to 128 unreserved characters. */
export function pkceChallengeOf(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;

export interface CodeExchange {
  code: string;
  clientId: string;
  redirectUri: string;
  codeVerifier: string;
}

export type ExchangeOutcome =
  | { ok: true; token: string; scopes: string[]; tokenId: string }
  | {
      ok: false;
      error: 'invalid_grant' | 'invalid_request';
      why:
        | 'unknown'
        | 'replayed'
        | 'expired'
        | 'wrong_client'
        | 'wrong_redirect'
        | 'wrong_verifier'
        | 'no_verifier';
    };

/**
 * The token endpoint's authorization_code grant. A code is good once, for a minute, for the client
 * it was issued to, with the same redirect URI and the PKCE verifier of its challenge. A code
 * presented again revokes the token it became (OAuth 2.1 §4.1.3). The token is minted by the same
 * function as a device grant's, in the transaction that spends the code, after the member's tier is
 * read again.
 */
export async function exchangeCode(
  deps: Store & Clocked & Tiered & WritePort,
  exchange: CodeExchange,
): Promise<ExchangeOutcome> {
  if (!exchange.codeVerifier) return { ok: false, error: 'invalid_request', why: 'no_verifier' };
  if (exchange.code.length > 100) return { ok: false, error: 'invalid_grant', why: 'unknown' };
  const row = await oauthAuthorizations.byCodeHash(deps.db, sha256(exchange.code));
  if (!row) return { ok: false, error: 'invalid_grant', why: 'unknown' };
  if (row.status === 'exchanged') {
    if (row.token_id) await revokeToken(deps, row.token_id, { kind: 'oauth_code_replayed' });
    return { ok: false, error: 'invalid_grant', why: 'replayed' };
  }
  if (row.status !== 'approved') return { ok: false, error: 'invalid_grant', why: 'unknown' };
  if (deps.clock.now() >= Number(row.code_expires_at))
    return { ok: false, error: 'invalid_grant', why: 'expired' };
  if (!constantTimeEqual(row.client_id, exchange.clientId))
    return { ok: false, error: 'invalid_grant', why: 'wrong_client' };
  if (row.redirect_uri !== exchange.redirectUri)
    return { ok: false, error: 'invalid_grant', why: 'wrong_redirect' };
  if (
    !VERIFIER.test(exchange.codeVerifier) ||
    !constantTimeEqual(pkceChallengeOf(exchange.codeVerifier), row.code_challenge)
  )
    return { ok: false, error: 'invalid_grant', why: 'wrong_verifier' };
  return transact(deps, async (trx) => {
    const now = deps.clock.now();
    const claimed = await oauthAuthorizations.markExchanged(trx, row.id, 'approved', 'exchanged', now);
    if (!claimed) return { ok: false, error: 'invalid_grant', why: 'replayed' } as const;
    const consented = await mintConsentedToken(deps, trx, row, { name: 'OAuth client', source: 'oauth' });
    if (!consented) return { ok: false, error: 'invalid_grant', why: 'unknown' } as const;
    const { granted, minted } = consented;
    await oauthAuthorizations.setToken(trx, row.id, minted.row.id);
    await oauthClients.markUsed(trx, row.client_id, now);
    return { ok: true, token: minted.plaintext, scopes: granted, tokenId: minted.row.id } as const;
  });
}
