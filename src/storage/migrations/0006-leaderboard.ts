import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * The commit leaderboard: each member's link to an account on the code host (never the host's
 * token: only who the account is and how that was proven), the member's opt-in, and the weekly
 * counts and ranks the refresh job computes.
 */
export const leaderboard: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('vcs_links')
      .addColumn('member_id', 'text', (c) => c.primaryKey().references('members.id'))
      // One host account counts for one member only; the id survives a rename on the host.
      .addColumn('host_user_id', 'text', (c) => c.notNull().unique())
      .addColumn('username', 'text', (c) => c.notNull())
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('verified_at', 'bigint', (c) => c.notNull())
      .addColumn('opted_in', 'integer', (c) => c.notNull())
      .addColumn('private_counting', 'integer', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('leaderboard_weeks')
      .addColumn('week_start', 'bigint', (c) => c.primaryKey())
      .addColumn('generated_at', 'bigint', (c) => c.notNull())
      .addColumn('failed', 'integer', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('leaderboard_counts')
      .addColumn('week_start', 'bigint', (c) => c.notNull())
      .addColumn('member_id', 'text', (c) => c.notNull().references('members.id'))
      .addColumn('commits', 'integer', (c) => c.notNull())
      .addColumn('rank', 'integer', (c) => c.notNull())
      .addColumn('counted_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('leaderboard_counts_pk', ['week_start', 'member_id'])
      .execute();
  },
};
