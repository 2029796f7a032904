import { MS } from '../../clock.ts';
import { randomId, sha256 } from '../../secrets.ts';
import { members } from '../../storage/members.ts';
import { signInLinks } from '../../storage/sign-in-links.ts';
import { transact, type WritePort } from '../../storage/transactions.ts';
import type { Tiered } from '../access/tiers.ts';
import type { Clocked, Configured, Store } from '../ports.ts';
import { openSessionForVerifiedEmail } from './verified-email.ts';

export const SIGN_IN_LINK_TTL_MS = 15 * MS.minute;
/**
 * A single-use sign-in link for a known member, or for anyone when open sign-up is on. Returns the
 * link's secret, or undefined when no link is sent; the caller shows the same page either way, so
 * the answer does not tell who is a member.
 */
export async function issueSignInLink(
  deps: Store & Clocked & Configured<'openSignup'>,
  email: string,
): Promise<string | undefined> {
  const known = await members.byEmail(deps.db, email);
  if (!known && !deps.config.openSignup) return undefined;
  const secret = randomId('sil', 32);
  const now = deps.clock.now();
  await signInLinks.insert(deps.db, {
    id_hash: sha256(secret),
    email,
    created_at: now,
    expires_at: now + SIGN_IN_LINK_TTL_MS,
    used_at: null,
  });
  return secret;
}

/**
 * Spends the link (once, even under concurrent redemptions), creates the member on a first open
 * sign-up, and opens a session. Returns the session id, or undefined for a used, expired or unknown link.
 */
export async function redeemSignInLink(
  deps: Clocked & Configured<'openSignup'> & Tiered & WritePort,
  secret: string,
): Promise<string | undefined> {
  if (secret.length > 200) return undefined;
  return transact(deps, async (tx) => {
    const now = deps.clock.now();
    const email = await signInLinks.spend(tx, sha256(secret), now);
    if (email === undefined) return undefined;
    return openSessionForVerifiedEmail(tx, deps, email);
  });
}

/**
 * Whether this spent link opened the session `sessionHash` (or the member signed in again since),
 * within the link's 15 minutes: the browser that sent the confirm form twice is already signed in
 * by it, and may go on where the first answer was sending it.
 */
export async function linkOpenedSession(
  deps: Store & Clocked,
  secret: string,
  sessionHash: string,
): Promise<boolean> {
  if (secret.length > 200) return false;
  return signInLinks.spentIntoSession(deps.db, sha256(secret), sessionHash, deps.clock.now());
}
