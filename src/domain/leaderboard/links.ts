import { apiError } from '../../core/errors.ts';
import type { Executor, VcsLinksTable } from '../../storage/schema.ts';
import { transact, type WritePort } from '../../storage/transactions.ts';
import type { Clocked, Configured } from '../ports.ts';
import type { HostAccount } from './code-host.ts';
import { dropFromBoards } from './standings.ts';

export type LinkSource = 'oauth' | 'token';

export async function linkOf(db: Executor, memberId: string): Promise<VcsLinksTable | undefined> {
  return db.selectFrom('vcs_links').selectAll().where('member_id', '=', memberId).executeTakeFirst();
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
    const holder = await trx
      .selectFrom('vcs_links')
      .select('member_id')
      .where('host_user_id', '=', account.id)
      .executeTakeFirst();
    if (holder && holder.member_id !== memberId) {
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
      await trx.updateTable('vcs_links').set(row).where('member_id', '=', memberId).execute();
      if (!sameAccount) await dropFromBoards(trx, memberId, now);
    } else {
      await trx.insertInto('vcs_links').values(row).execute();
    }
    return row;
  });
}

/** Forgets the link; the member leaves the board at once. False when there was none. */
export async function unlinkAccount(deps: Clocked & WritePort, memberId: string): Promise<boolean> {
  const now = deps.clock.now();
  return transact(deps, async (trx) => {
    const removed = await trx.deleteFrom('vcs_links').where('member_id', '=', memberId).executeTakeFirst();
    await dropFromBoards(trx, memberId, now);
    return Number(removed.numDeletedRows) > 0;
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
    await trx
      .updateTable('vcs_links')
      .set({ opted_in: optIn ? 1 : 0, updated_at: now })
      .where('member_id', '=', memberId)
      .execute();
    if (!optIn) await dropFromBoards(trx, memberId, now);
    return link.username;
  });
}
