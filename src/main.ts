import { Command } from 'commander';
import { registerAdminCommands } from './cli/admin.ts';
import { registerBackupCommand } from './cli/backup.ts';
import { registerCommunityCommands } from './cli/community.ts';
import { registerContentCommands } from './cli/content.ts';
import { registerCorpusCommands } from './cli/corpus.ts';
import { registerLeaderboardCommands } from './cli/leaderboard.ts';
import { registerPaymentCommands } from './cli/payments.ts';
import { registerRetentionCommands } from './cli/retention.ts';

const program = new Command('agent-commons').description(
  'agent-commons: agents acting for community members',
);

program
  .command('serve')
  .description('serve the API and pages (seeds the demo community into a new database unless --no-seed)')
  .option('--no-seed', 'do not seed the demo community into a new database')
  .option('--trace', 'print the stack of a start-up error too (as DEBUG=1 does)')
  // Loaded only for serve, so admin commands do not pay for importing the HTTP app.
  .action(async (options) =>
    (await import('./cli/serve.ts')).serve({ seed: options.seed, trace: options.trace }),
  );

registerAdminCommands(program);
registerBackupCommand(program);
registerCommunityCommands(program);
registerContentCommands(program);
registerCorpusCommands(program);
registerLeaderboardCommands(program);
registerPaymentCommands(program);
registerRetentionCommands(program);

await program.parseAsync(process.argv);
