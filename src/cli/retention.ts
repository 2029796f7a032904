import type { Command } from 'commander';
import { iso } from '../clock.ts';
import { printJson, printTable, withDeps } from './command-helpers.ts';

export function registerRetentionCommands(program: Command): void {
  const retention = program.command('retention').description('deleting records past their retention window');
  retention
    .command('sweep')
    .description(
      'delete now what the RETENTION_* settings say is past its window (what serve does every RETENTION_SWEEP_MINUTES); safe to run beside the server',
    )
    .option('--dry-run', 'count, per kind, the rows a sweep would delete now, and delete nothing')
    .option('--json', 'print JSON')
    .action((o) =>
      withDeps(async (deps) => {
        const { sweepRetention } = await import('../domain/retention/sweep.ts');
        const report = await sweepRetention(deps, { dryRun: Boolean(o.dryRun) });
        // Another instance's sweep holds the lease: nothing was done, which scripts should notice.
        if (!report.ran) process.exitCode = 2;
        const kinds = report.kinds.map((k) => ({
          kind: k.kind,
          days: k.days || 'keep',
          cutoff: k.cutoff === null ? null : iso(k.cutoff),
          [report.dryRun ? 'would_remove' : 'removed']: k.rows,
        }));
        if (o.json) return printJson({ ran: report.ran, dry_run: report.dryRun, kinds });
        if (!report.ran) {
          process.stdout.write('another sweep holds the lease; nothing removed\n');
          return;
        }
        const rows = kinds.map((k) => ({ ...k, cutoff: k.cutoff ?? '-' }));
        printTable(rows, ['kind', 'days', 'cutoff', report.dryRun ? 'would_remove' : 'removed']);
        const total = report.kinds.reduce((sum, k) => sum + k.rows, 0);
        process.stdout.write(
          report.dryRun ? `would remove ${total} rows; nothing removed\n` : `removed ${total} rows\n`,
        );
      }),
    );
}
