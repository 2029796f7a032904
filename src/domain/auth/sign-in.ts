import { MS } from '../../clock.ts';
import { randomId, sha256 } from '../../secrets.ts';
import { members } from '../../storage/members.ts';
import { signInLinks } from '../../storage/sign-in-links.ts';
import { transact, type WritePort } from '../../storage/transactions.ts';
import type { Tiered } from '../access/tiers.ts';
import type { Clocked, Configured, Store } from '../ports.ts';
import { openSessionForVerifiedEmail } from './verified-email.ts';

export const SIGN_IN_LINK_TTL_MS = 15 * MS.minute;
/** The cookie of the browser that asked for a link: opened there, the link signs in at once. */
export const SIGN_IN_BROWSER_COOKIE = '__signin';
const BROWSER_SECRET = /^sib_[A-Za-z0-9_-]{20,100}$/;

/**
 * The asking browser's secret: the one its cookie already holds (so each of several links it asked
 * for opens in one step), or a new one.
 */
export function signInBrowserSecret(cookieValue: string | undefined): string {
  return isSignInBrowserSecret(cookieValue) ? cookieValue : randomId('sib', 32);
}

export function isSignInBrowserSecret(value: string | undefined): value is string {
  return value !== undefined && BROWSER_SECRET.test(value);
}

/**
 * A single-use sign-in link for a known member, or for anyone when open sign-up is on, bound to the
 * asking browser's secret (only its hash is stored). Returns the link's secret, or undefined when no
 * link is sent; the caller shows the same page either way, so the answer does not tell who is a member.
 */
export async function issueSignInLink(
  deps: Store & Clocked & Configured<'openSignup'>,
  email: string,
  browserSecret: string,
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
    browser_hash: sha256(browserSecret),
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

export type BrowserRedemption =
  | { outcome: 'signed_in'; sessionId: string }
  /** This browser asked for the link, but it is used or past its 15 minutes. */
  | { outcome: 'spent' }
  /** Not a link this browser asked for (another device, a mail scanner) or no link at all. */
  | { outcome: 'elsewhere' };

/**
 * The link opened in the browser that asked for it: spent and signed in at once, as `redeemSignInLink`
 * does. Any other browser spends nothing and is told `elsewhere`: it gets the confirm button.
 */
export async function redeemInAskingBrowser(
  deps: Store & Clocked & Configured<'openSignup'> & Tiered & WritePort,
  secret: string,
  browserSecret: string,
): Promise<BrowserRedemption> {
  if (secret.length > 200 || !isSignInBrowserSecret(browserSecret)) return { outcome: 'elsewhere' };
  const [hash, browserHash] = [sha256(secret), sha256(browserSecret)];
  const sessionId = await transact(deps, async (tx) => {
    const email = await signInLinks.spendInBrowser(tx, hash, browserHash, deps.clock.now());
    return email === undefined ? undefined : openSessionForVerifiedEmail(tx, deps, email);
  });
  if (sessionId) return { outcome: 'signed_in', sessionId };
  return (await signInLinks.askedFrom(deps.db, hash, browserHash))
    ? { outcome: 'spent' }
    : { outcome: 'elsewhere' };
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
