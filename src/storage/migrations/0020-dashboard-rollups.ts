import { type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * What the operator's landing page counts, kept as the rows are written rather than counted from
 * the growing tables on every load (storage/rollups.ts):
 * - activity_days: calls and refusals per UTC day (its number since the epoch), surface and
 *   operation, added to in the call's own transaction;
 * - tallies: named counters (tokens live, sandbox and revoked, members holding a live token, live
 *   tokens whose last use falls on each day);
 * - token_holders: each member's live tokens, so the count of holders moves only when a member's
 *   first token is minted or last one revoked.
 * Each is filled from the rows already there, so the page shows the same numbers before and after.
 */
export const dashboardRollups: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('activity_days')
      .addColumn('day', 'integer', (c) => c.notNull())
      .addColumn('surface', 'text', (c) => c.notNull())
      .addColumn('operation', 'text', (c) => c.notNull())
      .addColumn('calls', 'bigint', (c) => c.notNull())
      .addColumn('refusals', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('activity_days_key', ['day', 'surface', 'operation'])
      .execute();
    await db.schema
      .createTable('tallies')
      .addColumn('key', 'text', (c) => c.primaryKey())
      .addColumn('count', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('token_holders')
      .addColumn('member_id', 'text', (c) => c.primaryKey())
      .addColumn('live', 'integer', (c) => c.notNull())
      .execute();

    await sql`insert into activity_days (day, surface, operation, calls, refusals)
      select at / 86400000, surface, operation, count(*), sum(case when status >= 400 then 1 else 0 end)
      from activity group by at / 86400000, surface, operation`.execute(db);
    await sql`insert into token_holders (member_id, live)
      select member_id, count(*) from tokens where revoked_at is null group by member_id`.execute(db);
    await sql`insert into tallies (key, count)
      select 'tokens_live', count(*) from tokens where revoked_at is null and sandbox = 0
      union all select 'tokens_sandbox', count(*) from tokens where revoked_at is null and sandbox <> 0
      union all select 'tokens_revoked', count(*) from tokens where revoked_at is not null
      union all select 'token_holders', count(*) from token_holders`.execute(db);
    await sql`insert into tallies (key, count)
      select 'tokens_last_used:' || cast(last_used_at / 86400000 as text), count(*) from tokens
      where revoked_at is null and last_used_at is not null group by last_used_at / 86400000`.execute(db);
  },
};
