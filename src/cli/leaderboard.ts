import type { Command } from 'commander';
import { iso } from '../clock.ts';
import { refreshLeaderboard } from '../domain/leaderboard/refresh.ts';
import { printJson, withDeps } from './command-helpers.ts';

export function registerLeaderboardCommands(program: Command): void {
  const leaderboard = program.command('leaderboard').description('the weekly commit leaderboard');
  leaderboard
    .command('refresh')
    .description("count this week's commits of opted-in members through the code host and rank them")
    .option('--json', 'print JSON')
    .action((o) =>
      withDeps(async (deps) => {
        const report = await refreshLeaderboard(deps);
        const summary = {
          week: { from: iso(report.week.start), to: iso(report.week.end) },
          generated_at: iso(report.generatedAt),
          counted: report.counted,
          failed: report.failed,
          stopped_by: report.stoppedBy ?? null,
          retry_after_seconds: report.retryAfterSeconds ?? null,
        };
        // A partial run is not a crash, but scripts should notice it, whichever way it is printed.
        if (report.failed) process.exitCode = 2;
        if (o.json) return printJson(summary);
        process.stdout.write(
          `counted ${summary.counted}, failed ${summary.failed}${summary.stopped_by ? ` (stopped: ${summary.stopped_by})` : ''} for the week from ${summary.week.from}\n`,
        );
      }),
    );
}
