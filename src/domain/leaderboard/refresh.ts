import { leaderboard } from '../../storage/leaderboard.ts';
import { transact, type WritePort } from '../../storage/transactions.ts';
import { vcsLinks } from '../../storage/vcs-links.ts';
import type { Clocked, Configured, Store } from '../ports.ts';
import { CodeHost, CodeHostError, type HostFailure } from './code-host.ts';
import { rerankWeek } from './standings.ts';
import { isoWeekOf, type Week } from './week.ts';

export interface RefreshReport {
  week: Week;
  generatedAt: number;
  counted: number;
  failed: number;
  /** Why the run stopped asking the host before the last member (their previous counts stay). */
  stoppedBy?: HostFailure;
  retryAfterSeconds?: number;
}

/** Failures that would hit every remaining member alike: stop asking instead of spending the budget. */
const STOPPING: HostFailure[] = ['rate_limited', 'refused'];

/**
 * Counts this week's commits of every opted-in member through the host and ranks them. A member
 * the host cannot count this time keeps the previous count; the run then marks the board stale.
 * Host failures never escape: the job is called from a timer and must survive a bad host.
 */
/** What a refresh reads, counts and writes. */
type RefreshPort = Store & Clocked & Configured<'codeHost' | 'leaderboardRefreshMinutes'> & WritePort;

export async function refreshLeaderboard(
  deps: RefreshPort,
  host: CodeHost = new CodeHost(deps.config.codeHost),
): Promise<RefreshReport> {
  const week = isoWeekOf(deps.clock.now());
  const participants = await vcsLinks.optedIn(deps.db);
  const counts = new Map<string, number>();
  let stop: CodeHostError | undefined;
  for (const participant of participants) {
    if (stop) break;
    try {
      counts.set(participant.member_id, await host.countCommits(participant.username, week));
    } catch (error) {
      if (!(error instanceof CodeHostError)) throw error;
      if (STOPPING.includes(error.failure)) stop = error;
    }
  }
  const generatedAt = deps.clock.now();
  const failed = participants.length - counts.size;
  await transact(deps, async (trx) => {
    // Whoever opted out while the host was being asked stays off the board.
    const stillIn = new Set((await vcsLinks.optedIn(trx)).map((row) => row.member_id));
    for (const [memberId, commits] of counts) {
      if (!stillIn.has(memberId)) continue;
      await leaderboard.upsertCount(trx, week.start, memberId, commits, generatedAt);
    }
    await rerankWeek(trx, week.start);
    await leaderboard.recordRun(trx, week.start, generatedAt, failed);
  });
  return {
    week,
    generatedAt,
    counted: counts.size,
    failed,
    stoppedBy: stop?.failure,
    retryAfterSeconds: stop?.retryAfterSeconds,
  };
}

/**
 * Claims the scheduled run for this instance for most of an interval: of several instances on one
 * database only the first whose timer fires runs the job, so the code host is asked once per
 * interval, not once per instance. The claim is one conditional update only one instance can win.
 */
async function claimScheduledRun(deps: Store & Clocked, leaseMs: number): Promise<boolean> {
  const now = deps.clock.now();
  return leaderboard.leaseRun(deps.db, now, now + leaseMs);
}

/** When the serve timer first runs the job and how often after that. */
export interface RefreshTiming {
  firstRunMs: number;
  intervalMs: number;
}

/**
 * Runs the job 5 s after start and every `LEADERBOARD_REFRESH_MINUTES` (never two runs at once in
 * this process; of several instances, the one that claims the interval). `timing` overrides both
 * delays (the tests use short real ones).
 */
export function scheduleLeaderboardRefresh(
  deps: RefreshPort,
  log: { warn(details: object, message: string): void; info(details: object, message: string): void },
  timing?: RefreshTiming,
): () => void {
  const minutes = deps.config.leaderboardRefreshMinutes;
  if (minutes <= 0) return () => {};
  const { firstRunMs, intervalMs } = timing ?? { firstRunMs: 5_000, intervalMs: minutes * 60_000 };
  let running = false;
  const run = async () => {
    if (running) return;
    running = true;
    try {
      if (!(await claimScheduledRun(deps, Math.round(intervalMs * 0.9)))) {
        log.info({}, 'leaderboard refresh left to the instance that claimed this interval');
        return;
      }
      const report = await refreshLeaderboard(deps);
      const details = { counted: report.counted, failed: report.failed, stoppedBy: report.stoppedBy };
      if (report.failed) log.warn(details, 'leaderboard refresh incomplete; the board is marked stale');
      else log.info(details, 'leaderboard refreshed');
    } catch (error) {
      log.warn({ err: error }, 'leaderboard refresh failed');
    } finally {
      running = false;
    }
  };
  const first = setTimeout(run, firstRunMs);
  const timer = setInterval(run, intervalMs);
  first.unref();
  timer.unref();
  return () => {
    clearTimeout(first);
    clearInterval(timer);
  };
}
