import { apiError } from '../../core/errors.ts';
import type { Executor, VcsLinksTable } from '../../storage/schema.ts';
import { transact, type WritePort } from '../../storage/transactions.ts';
import { vcsLinks } from '../../storage/vcs-links.ts';
import type { Clocked, Configured } from '../ports.ts';
import type { HostAccount } from './code-host.ts';
import { dropFromBoards } from './standings.ts';

export type LinkSource = 'oauth' | 'token';

export async function linkOf(db: Executor, memberId: string): Promise<VcsLinksTable | undefined> {
  return vcsLinks.ofMember(db, memberId);
}

/**
 * Records the host account the member proved they hold. Relinking the same account refreshes it and
 * keeps the opt-in; linking another account starts opted out, since the consent was for the old one.
 */
export async function linkAccount(
  deps: Clocked & WritePort,
  memberId: string,
  account: HostAccount,
  source: LinkSource,
): Promise<VcsLinksTable> {
  const now = deps.clock.now();
  return transact(deps, async (trx) => {
    const holder = await vcsLinks.holderOf(trx, account.id);
    if (holder !== undefined && holder !== memberId) {
      throw apiError('vcs_account_taken', { login: account.login });
    }
    const current = await linkOf(trx, memberId);
    const sameAccount = current?.host_user_id === account.id;
    const row: VcsLinksTable = {
      member_id: memberId,
      host_user_id: account.id,
      username: account.login,
      source,
      verified_at: now,
      opted_in: sameAccount ? Number(current.opted_in) : 0,
      private_counting: 0,
      updated_at: now,
    };
    if (current) {
      await vcsLinks.replace(trx, row);
      if (!sameAccount) await dropFromBoards(trx, memberId, now);
    } else {
      await vcsLinks.insert(trx, row);
    }
    return row;
  });
}

/** Forgets the link; the member leaves the board at once. False when there was none. */
export async function unlinkAccount(deps: Clocked & WritePort, memberId: string): Promise<boolean> {
  const now = deps.clock.now();
  return transact(deps, async (trx) => {
    const removed = await vcsLinks.remove(trx, memberId);
    await dropFromBoards(trx, memberId, now);
    return removed;
  });
}

/**
 * Opting in needs a linked account (409 no_vcs_link); opting out always works and takes the member
 * off the board at once. Returns the linked username, if any.
 */
export async function setOptIn(
  deps: Clocked & Configured<'publicUrl'> & WritePort,
  memberId: string,
  optIn: boolean,
): Promise<string | null> {
  const now = deps.clock.now();
  return transact(deps, async (trx) => {
    const link = await linkOf(trx, memberId);
    if (!link) {
      if (!optIn) return null;
      throw apiError('no_vcs_link', {
        extra: { link_url: `${deps.config.publicUrl}/leaderboard/link` },
      });
    }
    await vcsLinks.setOptIn(trx, memberId, optIn, now);
    if (!optIn) await dropFromBoards(trx, memberId, now);
    return link.username;
  });
}
