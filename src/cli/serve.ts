import { buildApp } from '../app.ts';
import { loadConfig } from '../config.ts';
import { createDeps } from '../deps.ts';
import { scheduleLeaderboardRefresh } from '../domain/leaderboard/refresh.ts';
import { startScheduler } from '../workers/scheduler.ts';

export async function serve(options: { seed: boolean }): Promise<void> {
  const config = loadConfig(process.env, options.seed ? {} : { seedDemo: false });
  const deps = await createDeps(config);
  const app = await buildApp(deps);
  await app.listen({ port: config.port, host: config.host });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  if (deps.seeded) app.log.info('seeded the demo community into the new database');
  process.stdout.write(
    `agent-commons listening on http://${config.host}:${port} (public URL ${config.publicUrl}; database ${deps.database.engine} ${deps.database.location})\n`,
  );
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
