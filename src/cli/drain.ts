// SIGTERM: leave without losing anything. /readyz turns 503 (the load balancer stops sending), the
// listener closes (no new connections), every answer from now on closes its connection (a client on
// keep-alive moves to another instance instead of meeting a closed socket), requests and background
// jobs in progress get DRAIN_GRACE_MS to finish, then the leases this instance still holds are given
// back, the database is closed, and the process exits 0.
import type { Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { releaseHeldLeases } from '../domain/queue/claim.ts';
import type { Deps } from '../operations/services.ts';
import { startDraining } from '../surfaces/health.ts';

export interface DrainParts {
  app: FastifyInstance;
  deps: Deps;
  /** Timers to stop at once (they would start new work). */
  stopTimers: (() => void)[];
  /** Stops the background jobs and resolves once the runs in progress have finished. */
  stopScheduler: () => Promise<void>;
  metricsServer?: Server;
}

export function drainOnSignal(parts: DrainParts): void {
  let draining = false;
  const drain = (signal: NodeJS.Signals) => {
    // A second signal (Ctrl-C pressed again) means now: leases left are retried after their lease.
    if (draining) {
      process.stdout.write(`${signal} while draining: exiting now\n`);
      process.exit(1);
    }
    draining = true;
    void drainThenExit(parts, signal);
  };
  process.on('SIGTERM', drain);
  process.on('SIGINT', drain);
}

/**
 * Stops accepting connections and resolves once every open one has ended. server.close() ends the
 * idle ones at once; a connection busy at the signal ends after its answer (Connection: close), or,
 * when that answer began before the signal, becomes idle and is ended by the next sweep.
 */
function closeListener(server: Server): Promise<void> {
  return new Promise((resolve) => {
    const sweep = setInterval(() => server.closeIdleConnections(), 100);
    server.close(() => {
      clearInterval(sweep);
      resolve();
    });
  });
}

async function drainThenExit(parts: DrainParts, signal: NodeJS.Signals): Promise<void> {
  const { app, deps } = parts;
  const graceMs = deps.config.drainGraceMs;
  const started = Date.now();
  app.log.info({ signal, graceMs }, 'draining: /readyz answers 503, finishing work in progress');
  startDraining(app);
  // Every answer started from now on says Connection: close and ends its connection.
  app.server.on('request', (_request, response) => {
    response.shouldKeepAlive = false;
  });
  for (const stop of parts.stopTimers) stop();
  let timer: NodeJS.Timeout | undefined;
  const graceOver = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), graceMs);
  });
  const finished = Promise.all([closeListener(app.server), parts.stopScheduler()]).then(
    () => 'done' as const,
  );
  const outcome = await Promise.race([finished, graceOver]);
  clearTimeout(timer);
  if (outcome === 'late') {
    app.log.warn({ graceMs }, 'draining: grace period over, closing the connections still open');
    app.server.closeAllConnections();
  }
  // Fastify's own close (its hooks) once nothing is left to answer: closing it first
  // would answer 503 to a request arriving on a keep-alive connection that was busy at the signal.
  await app.close().catch(() => {});
  const released = await releaseHeldLeases(deps.db, deps.clock.now()).catch((error: unknown) => {
    app.log.error({ err: error }, 'draining: could not give the worker leases back');
    return 0;
  });
  parts.metricsServer?.close();
  await deps.close().catch(() => {});
  // On stdout like the start lines, whatever the log level: the operator's record of the stop.
  process.stdout.write(
    `drained in ${Date.now() - started} ms (${outcome === 'done' ? 'all work finished' : 'grace period over'}); ${released} worker leases given back\n`,
  );
  process.exit(0);
}
