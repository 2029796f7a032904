import type { Executor } from '../../storage/schema.ts';
import type { Clocked, Configured, Store } from '../ports.ts';
import { isoWeekOf, type Week } from './week.ts';

/** Competition ranking (1, 2, 2, 4) by commits; ties are listed by handle so the order is stable. */
export async function rerankWeek(trx: Executor, weekStart: number): Promise<void> {
  const rows = await trx
    .selectFrom('leaderboard_counts')
    .innerJoin('members', 'members.id', 'leaderboard_counts.member_id')
    .select(['leaderboard_counts.member_id', 'leaderboard_counts.commits', 'leaderboard_counts.rank'])
    .where('leaderboard_counts.week_start', '=', weekStart)
    .orderBy('leaderboard_counts.commits', 'desc')
    .orderBy('members.handle')
    .execute();
  let rank = 0;
  let previous: number | undefined;
  for (const [index, row] of rows.entries()) {
    const commits = Number(row.commits);
    if (commits !== previous) rank = index + 1;
    previous = commits;
    if (Number(row.rank) === rank) continue;
    await trx
      .updateTable('leaderboard_counts')
      .set({ rank })
      .where('week_start', '=', weekStart)
      .where('member_id', '=', row.member_id)
      .execute();
  }
}

/** Takes a member off the boards at once (opt-out, unlink, another account) instead of at the next refresh. */
export async function dropFromBoards(trx: Executor, memberId: string, now: number): Promise<void> {
  await trx.deleteFrom('leaderboard_counts').where('member_id', '=', memberId).execute();
  await rerankWeek(trx, isoWeekOf(now).start);
}

export interface BoardMember {
  rank: number;
  handle: string;
  name: string;
  commits: number;
}

export interface Board {
  week: Week;
  generatedAt: number | null;
  stale: boolean;
  total: number;
  members: BoardMember[];
}

/**
 * Stale: this week has not been counted yet, the last run could not refresh every member (their
 * previous counts are shown), or the last run is older than two refresh intervals.
 */
function isStale(
  deps: Configured<'leaderboardRefreshMinutes'>,
  week: { generated_at: number; failed: number } | undefined,
  now: number,
) {
  if (!week) return true;
  const interval = (deps.config.leaderboardRefreshMinutes || 60) * 60_000;
  return Number(week.failed) > 0 || now - Number(week.generated_at) > 2 * interval;
}

async function weekRow(deps: Store, weekStart: number) {
  return deps.db
    .selectFrom('leaderboard_weeks')
    .select(['generated_at', 'failed'])
    .where('week_start', '=', weekStart)
    .executeTakeFirst();
}

/** What a board read needs. */
type BoardPort = Store & Clocked & Configured<'leaderboardRefreshMinutes'>;

export async function currentBoard(deps: BoardPort, limit: number): Promise<Board> {
  const now = deps.clock.now();
  const week = isoWeekOf(now);
  const run = await weekRow(deps, week.start);
  const rows = await deps.db
    .selectFrom('leaderboard_counts')
    .innerJoin('members', 'members.id', 'leaderboard_counts.member_id')
    .select(['leaderboard_counts.rank', 'leaderboard_counts.commits', 'members.handle', 'members.name'])
    .where('leaderboard_counts.week_start', '=', week.start)
    .orderBy('leaderboard_counts.rank')
    .orderBy('members.handle')
    .execute();
  return {
    week,
    generatedAt: run ? Number(run.generated_at) : null,
    stale: isStale(deps, run, now),
    total: rows.length,
    members: rows.slice(0, limit).map((row) => ({
      rank: Number(row.rank),
      handle: row.handle,
      name: row.name,
      commits: Number(row.commits),
    })),
  };
}

export interface Standing {
  count: number;
  rank: number;
  total: number;
  generatedAt: number;
}

/** The member's place on this week's board, when the refresh job has ranked them. */
export async function standingOf(deps: BoardPort, memberId: string): Promise<Standing | undefined> {
  const week = isoWeekOf(deps.clock.now());
  const [run, row, total] = await Promise.all([
    weekRow(deps, week.start),
    deps.db
      .selectFrom('leaderboard_counts')
      .select(['commits', 'rank'])
      .where('week_start', '=', week.start)
      .where('member_id', '=', memberId)
      .executeTakeFirst(),
    deps.db
      .selectFrom('leaderboard_counts')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('week_start', '=', week.start)
      .executeTakeFirstOrThrow(),
  ]);
  if (!run || !row) return undefined;
  return {
    count: Number(row.commits),
    rank: Number(row.rank),
    total: Number(total.n),
    generatedAt: Number(run.generated_at),
  };
}
