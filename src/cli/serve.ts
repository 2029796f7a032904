import { buildApp } from '../app.ts';
import { loadConfig } from '../config.ts';
import { createDeps } from '../deps.ts';
import { describeSignIn, SignInUndeliverable } from '../domain/auth/sign-in-mail.ts';
import { seedNewDatabase } from '../domain/demo/seed.ts';
import { scheduleLeaderboardRefresh } from '../domain/leaderboard/refresh.ts';
import { startScheduler } from '../workers/scheduler.ts';

export async function serve(options: { seed: boolean }): Promise<void> {
  const config = loadConfig(process.env, options.seed ? {} : { seedDemo: false });
  const deps = await createDeps(config).catch((error: unknown) => {
    if (!(error instanceof SignInUndeliverable)) throw error;
    process.stderr.write(`agent-commons cannot start: ${error.message}\n`);
    process.exit(1);
  });
  const seeded = await seedNewDatabase(deps);
  const app = await buildApp(deps);
  await app.listen({ port: config.port, host: config.host });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  if (seeded) app.log.info('seeded the demo community into the new database');
  process.stdout.write(
    `agent-commons listening on http://${config.host}:${port} (public URL ${config.publicUrl}; database ${deps.database.engine} ${deps.database.location})\n`,
  );
  process.stdout.write(`${describeSignIn(config, deps.mailer)}\n`);
  // The research index is built in the background now rather than at the first question.
  deps.corpus.warm();
  const stopScheduler = startScheduler(deps, app.log, { workers: config.runWorkers });
  const stopLeaderboard = scheduleLeaderboardRefresh(deps, app.log);
  const stop = async () => {
    stopLeaderboard();
    await app.close();
    await stopScheduler();
    await deps.close();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
