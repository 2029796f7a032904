import type { FastifyBaseLogger } from 'fastify';
import { buildApp } from '../app.ts';
import { type Config, loadConfig } from '../config.ts';
import { StartRefused } from '../core/errors.ts';
import { createDeps } from '../deps.ts';
import { describeSignIn } from '../domain/auth/sign-in-mail.ts';
import { seedNewDatabase } from '../domain/demo/seed.ts';
import { scheduleLeaderboardRefresh } from '../domain/leaderboard/refresh.ts';
import { describePayments } from '../domain/payments/describe.ts';
import { startPaymentReconciler } from '../domain/payments/reconcile-schedule.ts';
import { trimWhenIdle } from '../memory-trim.ts';
import { startMetricsServer } from '../surfaces/metrics-endpoint.ts';
import { startScheduler } from '../workers/scheduler.ts';
import { drainOnSignal } from './drain.ts';
import { logStream } from './terminal-log.ts';

/** The start line about metrics: where they are served, or that they are off. */
function describeMetrics(config: Config, portUrl: string | undefined): string {
  const places = [
    ...(config.metrics.path ? [`${config.publicUrl}${config.metrics.path}`] : []),
    ...(portUrl ? [portUrl] : []),
  ];
  if (places.length === 0) return 'metrics: off (set METRICS_PATH or METRICS_PORT)';
  const guard = config.metrics.bearer ? 'bearer METRICS_BEARER' : 'no bearer, loopback only';
  return `metrics: ${places.join(' and ')} (${guard})`;
}

/** DEBUG=1 (any value but empty, 0 or false) asks for the stack of a start-up refusal. */
function wantsTrace(env: NodeJS.ProcessEnv): boolean {
  const value = env.DEBUG?.trim().toLowerCase();
  return value !== undefined && value !== '' && value !== '0' && value !== 'false';
}

/**
 * A start-up failure the operator fixes (a setting, a taken port): one sentence on stderr and exit
 * code 1; the stack only when asked for (`serve --trace`, DEBUG=1). Anything else is a fault and
 * keeps its stack.
 */
function refuseStart(sentence: string, error: unknown, trace: boolean): never {
  process.stderr.write(`agent-commons cannot start: ${sentence}\n`);
  if (trace && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`);
  process.exit(1);
}

/** The sentence for a listening address this process cannot have, or undefined for any other error. */
function listenFailure(error: unknown): string | undefined {
  const { code, address, port } = (error ?? {}) as { code?: string; address?: string; port?: number };
  const where = address === undefined ? `port ${port}` : `${address}:${port}`;
  switch (code) {
    case 'EADDRINUSE':
      return `${where} is already in use by another process (stop it, or set PORT to a free port)`;
    case 'EACCES':
      return `this process may not listen on ${where} (ports below 1024 need privileges; set PORT to 1024 or above)`;
    case 'EADDRNOTAVAIL':
      return `${address} is not an address of this machine (set HOST to one of its addresses, or 0.0.0.0)`;
    default:
      return undefined;
  }
}

/** Trims memory once the process has been idle a whole MEMORY_TRIM_IDLE_MS, the start counted as busy. */
function keepMemoryTrimmed(config: Config, started: Promise<void>, log: FastifyBaseLogger): () => void {
  if (config.memoryTrimIdleMs === 0) return () => {};
  let stopIdle = () => {};
  let stopped = false;
  void started.then(() => {
    if (stopped) return;
    stopIdle = trimWhenIdle(
      config.memoryTrimIdleMs,
      (trimmed) => log.info(trimmed, 'memory trimmed while idle'),
      { busyAtStart: true },
    );
  });
  return () => {
    stopped = true;
    stopIdle();
  };
}

export async function serve(options: { seed: boolean; trace?: boolean }): Promise<void> {
  const trace = options.trace === true || wantsTrace(process.env);
  let config: Config;
  try {
    config = loadConfig(process.env, options.seed ? {} : { seedDemo: false });
  } catch (error) {
    // Reading the settings does nothing else: whatever it throws is about a setting.
    return refuseStart(error instanceof Error ? error.message : String(error), error, trace);
  }
  const deps = await createDeps(config).catch((error: unknown) => {
    if (!(error instanceof StartRefused)) throw error;
    return refuseStart(error.message, error, trace);
  });
  const seeded = await seedNewDatabase(deps);
  const app = await buildApp(deps, { logger: { level: config.logLevel, stream: await logStream(config) } });
  await app.listen({ port: config.port, host: config.host }).catch((error: unknown) => {
    const sentence = listenFailure(error);
    if (!sentence) throw error;
    return refuseStart(sentence, error, trace);
  });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  if (seeded) app.log.info('seeded the demo community into the new database');
  process.stdout.write(
    `agent-commons listening on http://${config.host}:${port} (public URL ${config.publicUrl}; database ${deps.database.engine} ${deps.database.location})\n`,
  );
  process.stdout.write(`${describeSignIn(config, deps.mailer)}\n`);
  process.stdout.write(`${describePayments(config.payments)}\n`);
  const metrics = await startMetricsServer(deps).catch((error: unknown) => {
    const sentence = listenFailure(error);
    if (!sentence) throw error;
    return refuseStart(`metrics: ${sentence}`, error, trace);
  });
  process.stdout.write(`${describeMetrics(config, metrics?.url)}\n`);
  // The research index is built in the background now rather than at the first question; the
  // memory the start needed is given back once it is built and the process has been idle a while.
  const warmed = deps.corpus.warm();
  const stopTrim = keepMemoryTrimmed(config, warmed, app.log);
  const stopScheduler = startScheduler(deps, app.log, { workers: config.runWorkers });
  const stopLeaderboard = scheduleLeaderboardRefresh(deps, app.log);
  // Donations settled but never recorded (a killed process, a silent facilitator) are recorded now.
  const stopReconciler = startPaymentReconciler(deps, app.log);
  drainOnSignal({
    app,
    deps,
    stopTimers: [stopLeaderboard, stopReconciler, stopTrim],
    stopScheduler,
    metricsServer: metrics?.server,
  });
}
