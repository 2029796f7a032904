import { arg, onPostgres, prepare } from './engine/prepared.ts';
import { type Page, type PageRequest, pageOf } from './paging.ts';
import type { Executor, TokensTable } from './schema.ts';

// Agent tokens (table tokens): only a token's SHA-256 is stored, with its scopes, when it was last
// used or revoked, and the Ed25519 key bound to it. Every write here goes through Kysely's builder,
// so the lookup cache sees it (engine/write-watch.ts).

// The bearer lookup of every authenticated call: compiled once, and on SQLite read on the
// connection at once (engine/prepared.ts, directRead).
const withMemberByHashPrepared = prepare(
  (db) =>
    db
      .selectFrom('tokens')
      .innerJoin('members', 'members.id', 'tokens.member_id')
      .select([
        'tokens.id as token_id',
        'tokens.prefix',
        'tokens.scopes',
        'tokens.sandbox',
        'tokens.created_at',
        'tokens.last_used_at',
        'tokens.revoked_at',
        'tokens.signing_key_id',
        'tokens.signing_key_x',
        'tokens.signing_enforced',
        'members.id as member_id',
        'members.name',
        'members.email',
        'members.tier',
      ])
      .where('tokens.hash', '=', arg(0)),
  { directRead: true },
);

/** What a token's signing state is read from. */
const SIGNING_COLUMNS = [
  'id',
  'prefix',
  'member_id',
  'revoked_at',
  'signing_key_id',
  'signing_key_x',
  'signing_key_bound_at',
  'signing_enforced',
] as const;

export const tokens = {
  async insert(executor: Executor, row: TokensTable): Promise<void> {
    await executor.insertInto('tokens').values(row).execute();
  },

  /**
   * The token with this hash joined to its member (revoked or not), as zero or one row. The
   * prepared statement's promise is returned as it is: the bearer path takes no extra turn.
   */
  withMemberByHash(executor: Executor, hash: string) {
    return withMemberByHashPrepared(executor, hash);
  },

  async setLastUsed(executor: Executor, id: string, now: number): Promise<void> {
    await executor.updateTable('tokens').set({ last_used_at: now }).where('id', '=', id).execute();
  },

  /**
   * Records a use at `now` when the token's last one already falls on or after `since` (the same
   * day): false when it does not (never used, or last used before), which the caller counts.
   */
  async touchSince(executor: Executor, id: string, now: number, since: number): Promise<boolean> {
    const updated = await executor
      .updateTable('tokens')
      .set({ last_used_at: now })
      .where('id', '=', id)
      .where('last_used_at', '>=', since)
      .executeTakeFirst();
    return Number(updated.numUpdatedRows) > 0;
  },

  /** The token's last use and revocation, its row locked until the transaction ends (PostgreSQL). */
  lastUseForUpdate(executor: Executor, id: string) {
    const query = executor.selectFrom('tokens').select(['last_used_at', 'revoked_at']).where('id', '=', id);
    return (onPostgres(executor) ? query.forUpdate() : query).executeTakeFirst();
  },

  /** Marks the token revoked at `now` unless it is already; false when it was (or there is none). */
  async revoke(executor: Executor, id: string, now: number): Promise<boolean> {
    const updated = await executor
      .updateTable('tokens')
      .set({ revoked_at: now })
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(updated.numUpdatedRows) > 0;
  },

  /** The token's display prefix and its member, and what the dashboard's tallies count it by. */
  ownerOf(executor: Executor, id: string) {
    return executor
      .selectFrom('tokens')
      .select(['prefix', 'member_id', 'sandbox', 'last_used_at'])
      .where('id', '=', id)
      .executeTakeFirst();
  },

  /** Every token, or one member's, newest first. */
  newestFirst(executor: Executor, memberId?: string): Promise<TokensTable[]> {
    let query = executor.selectFrom('tokens').selectAll().orderBy('created_at', 'desc');
    if (memberId) query = query.where('member_id', '=', memberId);
    return query.execute();
  },

  /**
   * One page of a member's tokens, newest first (ties by id): a range of the index
   * (member_id, created_at, id), whatever the page.
   */
  page(executor: Executor, memberId: string, page: PageRequest): Promise<Page<TokensTable>> {
    return pageOf(
      executor.selectFrom('tokens').selectAll().where('member_id', '=', memberId),
      { time: 'created_at', id: 'id', direction: 'desc' },
      page,
    );
  },

  /** The member's token with this display prefix (the prefix is unique to its token, near enough). */
  byPrefix(executor: Executor, memberId: string, prefix: string): Promise<TokensTable | undefined> {
    return executor
      .selectFrom('tokens')
      .selectAll()
      .where('member_id', '=', memberId)
      .where('prefix', '=', prefix)
      .executeTakeFirst();
  },

  /** The member's token with this id, with its revocation and signing columns. */
  signingState(executor: Executor, memberId: string, id: string) {
    return executor
      .selectFrom('tokens')
      .select(SIGNING_COLUMNS)
      .where('id', '=', id)
      .where('member_id', '=', memberId)
      .executeTakeFirst();
  },

  /** The same columns for each of the member's tokens, or only those with these ids. */
  signingStates(executor: Executor, memberId: string, ids?: readonly string[]) {
    let query = executor.selectFrom('tokens').select(SIGNING_COLUMNS).where('member_id', '=', memberId);
    if (ids) query = query.where('id', 'in', ids.length ? [...ids] : ['']);
    return query.execute();
  },

  /** Binds the key to the token unless one is bound already; false when one was. */
  async bindSigningKey(
    executor: Executor,
    id: string,
    key: { id: string; x: string },
    now: number,
  ): Promise<boolean> {
    const updated = await executor
      .updateTable('tokens')
      .set({ signing_key_id: key.id, signing_key_x: key.x, signing_key_bound_at: now })
      .where('id', '=', id)
      .where('signing_key_id', 'is', null)
      .executeTakeFirst();
    return Number(updated.numUpdatedRows) > 0;
  },

  async clearSigningKey(executor: Executor, id: string): Promise<void> {
    await executor
      .updateTable('tokens')
      .set({ signing_key_id: null, signing_key_x: null, signing_key_bound_at: null })
      .where('id', '=', id)
      .execute();
  },

  async setSigningEnforced(executor: Executor, id: string, enforced: boolean): Promise<void> {
    await executor
      .updateTable('tokens')
      .set({ signing_enforced: enforced ? 1 : 0 })
      .where('id', '=', id)
      .execute();
  },
};
