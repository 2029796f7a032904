import { leaderboard } from '../../storage/leaderboard.ts';
import type { Executor } from '../../storage/schema.ts';
import type { Clocked, Configured, Store } from '../ports.ts';
import { isoWeekOf, type Week } from './week.ts';

/** Competition ranking (1, 2, 2, 4) by commits; ties are listed by handle so the order is stable. */
export async function rerankWeek(trx: Executor, weekStart: number): Promise<void> {
  const rows = await leaderboard.byCommits(trx, weekStart);
  let rank = 0;
  let previous: number | undefined;
  for (const [index, row] of rows.entries()) {
    const commits = Number(row.commits);
    if (commits !== previous) rank = index + 1;
    previous = commits;
    if (Number(row.rank) === rank) continue;
    await leaderboard.setRank(trx, weekStart, row.member_id, rank);
  }
}

/** Takes a member off the boards at once (opt-out, unlink, another account) instead of at the next refresh. */
export async function dropFromBoards(trx: Executor, memberId: string, now: number): Promise<void> {
  await leaderboard.removeMember(trx, memberId);
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

function weekRow(deps: Store, weekStart: number) {
  return leaderboard.run(deps.db, weekStart);
}

/** What a board read needs. */
type BoardPort = Store & Clocked & Configured<'leaderboardRefreshMinutes'>;

export async function currentBoard(deps: BoardPort, limit: number): Promise<Board> {
  const now = deps.clock.now();
  const week = isoWeekOf(now);
  const run = await weekRow(deps, week.start);
  const rows = await leaderboard.board(deps.db, week.start);
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
    leaderboard.countOf(deps.db, week.start, memberId),
    leaderboard.entries(deps.db, week.start),
  ]);
  if (!run || !row) return undefined;
  return {
    count: Number(row.commits),
    rank: Number(row.rank),
    total,
    generatedAt: Number(run.generated_at),
  };
}
