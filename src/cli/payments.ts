import type { Command } from 'commander';
import { printJson, withDeps } from './command-helpers.ts';

export function registerPaymentCommands(program: Command): void {
  const payments = program.command('payments').description('x402 donations');
  payments
    .command('reconcile')
    .description(
      'settle and record every donation whose request never recorded it (a killed process, a silent facilitator); safe to run beside the server',
    )
    .option('--json', 'print JSON')
    .action((o) =>
      withDeps(async (deps) => {
        const { reconcilePayments } = await import('../domain/payments/reconcile-pass.ts');
        const report = await reconcilePayments(deps);
        // Claims left waiting (leased by a request in flight, or the facilitator away): scripts should notice.
        if (report.waiting) process.exitCode = 2;
        if (o.json) return printJson(report);
        process.stdout.write(
          `recorded ${report.recorded}, failed ${report.failed}, still waiting ${report.waiting}\n`,
        );
      }),
    );
}
