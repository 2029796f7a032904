import { sql } from 'kysely';
import type { Executor } from './schema.ts';

// The tokens counted from the table itself (tokens), in one aggregate read over every row: the
// reference the dashboard's tallies (rollups.ts) are checked against. No page reads it.

export interface TokenTally {
  live: number;
  sandbox: number;
  revoked: number;
  /** Live tokens used after the time asked. */
  active: number;
  /** Members with at least one live token. */
  members: number;
}

export const tokenTally = {
  /** Live, sandbox and revoked tokens, those live and used after `usedAfter`, and their members. */
  async of(executor: Executor, usedAfter: number): Promise<TokenTally> {
    const row = await executor
      .selectFrom('tokens')
      .select([
        sql<number>`sum(case when revoked_at is null and sandbox = 0 then 1 else 0 end)`.as('live'),
        sql<number>`sum(case when revoked_at is null and sandbox <> 0 then 1 else 0 end)`.as('sandbox'),
        sql<number>`sum(case when revoked_at is not null then 1 else 0 end)`.as('revoked'),
        sql<number>`sum(case when revoked_at is null and last_used_at > ${usedAfter} then 1 else 0 end)`.as(
          'active',
        ),
        sql<number>`count(distinct case when revoked_at is null then member_id end)`.as('members'),
      ])
      .executeTakeFirstOrThrow();
    return {
      live: Number(row.live ?? 0),
      sandbox: Number(row.sandbox ?? 0),
      revoked: Number(row.revoked ?? 0),
      active: Number(row.active ?? 0),
      members: Number(row.members ?? 0),
    };
  },
};
