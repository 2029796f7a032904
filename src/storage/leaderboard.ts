import { takeLease } from './leases.ts';
import type { Executor } from './schema.ts';

// The weekly commit leaderboard: each opted-in member's count and rank per ISO week (table
// leaderboard_counts), each week's last run (table leaderboard_weeks), and the scheduled run's
// lease across instances (a row of settings).

const LEASE_KEY = 'leaderboard_refresh_lease';

export const leaderboard = {
  /** The week's rows by commits (most first), ties by the member's handle: what ranking reads. */
  byCommits(
    executor: Executor,
    weekStart: number,
  ): Promise<{ member_id: string; commits: number; rank: number }[]> {
    return executor
      .selectFrom('leaderboard_counts')
      .innerJoin('members', 'members.id', 'leaderboard_counts.member_id')
      .select(['leaderboard_counts.member_id', 'leaderboard_counts.commits', 'leaderboard_counts.rank'])
      .where('leaderboard_counts.week_start', '=', weekStart)
      .orderBy('leaderboard_counts.commits', 'desc')
      .orderBy('members.handle')
      .execute();
  },

  async setRank(executor: Executor, weekStart: number, memberId: string, rank: number): Promise<void> {
    await executor
      .updateTable('leaderboard_counts')
      .set({ rank })
      .where('week_start', '=', weekStart)
      .where('member_id', '=', memberId)
      .execute();
  },

  /** Writes a member's count for the week (a new row starts unranked; an existing one keeps its rank). */
  async upsertCount(
    executor: Executor,
    weekStart: number,
    memberId: string,
    commits: number,
    countedAt: number,
  ): Promise<void> {
    await executor
      .insertInto('leaderboard_counts')
      .values({ week_start: weekStart, member_id: memberId, commits, rank: 0, counted_at: countedAt })
      .onConflict((oc) =>
        oc.columns(['week_start', 'member_id']).doUpdateSet({ commits, counted_at: countedAt }),
      )
      .execute();
  },

  /** Removes the member from every week's board. */
  async removeMember(executor: Executor, memberId: string): Promise<void> {
    await executor.deleteFrom('leaderboard_counts').where('member_id', '=', memberId).execute();
  },

  /** The week's rows by rank, ties by handle, with the members' handles and names. */
  board(
    executor: Executor,
    weekStart: number,
  ): Promise<{ rank: number; commits: number; handle: string; name: string }[]> {
    return executor
      .selectFrom('leaderboard_counts')
      .innerJoin('members', 'members.id', 'leaderboard_counts.member_id')
      .select(['leaderboard_counts.rank', 'leaderboard_counts.commits', 'members.handle', 'members.name'])
      .where('leaderboard_counts.week_start', '=', weekStart)
      .orderBy('leaderboard_counts.rank')
      .orderBy('members.handle')
      .execute();
  },

  countOf(
    executor: Executor,
    weekStart: number,
    memberId: string,
  ): Promise<{ commits: number; rank: number } | undefined> {
    return executor
      .selectFrom('leaderboard_counts')
      .select(['commits', 'rank'])
      .where('week_start', '=', weekStart)
      .where('member_id', '=', memberId)
      .executeTakeFirst();
  },

  async entries(executor: Executor, weekStart: number): Promise<number> {
    const row = await executor
      .selectFrom('leaderboard_counts')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('week_start', '=', weekStart)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  /** The week's last run: when, and how many members it could not count. */
  run(executor: Executor, weekStart: number): Promise<{ generated_at: number; failed: number } | undefined> {
    return executor
      .selectFrom('leaderboard_weeks')
      .select(['generated_at', 'failed'])
      .where('week_start', '=', weekStart)
      .executeTakeFirst();
  },

  async recordRun(executor: Executor, weekStart: number, generatedAt: number, failed: number): Promise<void> {
    await executor
      .insertInto('leaderboard_weeks')
      .values({ week_start: weekStart, generated_at: generatedAt, failed })
      .onConflict((oc) => oc.column('week_start').doUpdateSet({ generated_at: generatedAt, failed }))
      .execute();
  },

  /**
   * Leases the scheduled run until `until` if the last lease ended by `now`: one conditional update
   * only one instance can win.
   */
  leaseRun: (executor: Executor, now: number, until: number) => takeLease(executor, LEASE_KEY, now, until),
};
