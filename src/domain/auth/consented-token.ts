import type { Executor } from '../../storage/schema.ts';
import type { WritePort } from '../../storage/transactions.ts';
import type { Tiered } from '../access/tiers.ts';
import { getMember, type Member } from '../members/members.ts';
import type { Clocked } from '../ports.ts';
import { type MintedToken, mintToken } from './tokens.ts';

/** A member's consent as the device grant and the OAuth authorization both store it. */
export interface StoredConsent {
  member_id: string | null;
  granted_scopes: string | null;
  sandbox: number;
  client_name: string | null;
}

export interface ConsentedToken {
  member: Member;
  granted: string[];
  /** Scopes the member consented to that the tier no longer grants. */
  nowDenied: string[];
  minted: MintedToken;
}

/**
 * The token a consent becomes once it is claimed, for the device grant and the OAuth code alike: the
 * member's tier is read again (it may have changed since the consent) and only what it still grants
 * is minted, in the caller's transaction (`trx`; the mint joins it), so the consent is spent only if
 * the token exists. Undefined when the member is gone.
 */
export async function mintConsentedToken(
  deps: WritePort & Clocked & Tiered,
  trx: Executor,
  consent: StoredConsent,
  fallback: { name: string; source: 'device' | 'oauth' },
): Promise<ConsentedToken | undefined> {
  const member = consent.member_id ? await getMember(trx, consent.member_id) : undefined;
  if (!member) return undefined;
  const consented = JSON.parse(consent.granted_scopes ?? '[]') as string[];
  const { granted, denied: nowDenied } = deps.tiers.split(member.tier, consented);
  const minted = await mintToken(deps, member, {
    scopes: granted,
    sandbox: consent.sandbox === 1,
    name: consent.client_name ?? fallback.name,
    source: fallback.source,
  });
  return { member, granted, nowDenied, minted };
}
