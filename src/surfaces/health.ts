// Liveness and readiness. /healthz: the process answers (restart it when it does not). /readyz: this
// instance can serve now (send it traffic): the database answers and can write, every migration this
// code declares has run, Redis answers when one is configured, and the instance is not draining (SIGTERM). On
// PostgreSQL it also says whether the lookup cache serves (its change listener is connected).
import type { FastifyInstance } from 'fastify';
import { errors } from '../core/errors.ts';
import type { Deps } from '../operations/services.ts';
import { probe } from '../storage/database.ts';
import { pendingMigrations } from '../storage/migrations.ts';

type CheckState = 'up' | 'down';

interface Readiness {
  ready: boolean;
  checks: Record<string, CheckState>;
  /** One line per check, for a person reading the answer (curl, a load balancer's health page). */
  lines: string[];
  /**
   * PostgreSQL only: whether the lookup cache serves (its change listener is connected). Not a
   * check: while it is off every lookup reads the database, as exact and only slower.
   */
  lookupCache?: 'on' | 'off';
}

const draining = new WeakSet<FastifyInstance>();
const drainHooks = new WeakMap<FastifyInstance, (() => void)[]>();

/**
 * From now on /readyz answers 503 `draining` (the load balancer stops sending new requests), and
 * what answers for as long as a client listens (an MCP subscription) is ended.
 */
export function startDraining(app: FastifyInstance): void {
  draining.add(app);
  for (const hook of drainHooks.get(app) ?? []) hook();
}

/** Whether startDraining was called for `app`. */
export function isDraining(app: FastifyInstance): boolean {
  return draining.has(app);
}

/** Runs `hook` when the app starts draining: an answer that would otherwise hold the drain open ends. */
export function onDraining(app: FastifyInstance, hook: () => void): void {
  drainHooks.set(app, [...(drainHooks.get(app) ?? []), hook]);
}

export function registerHealthChecks(app: FastifyInstance, deps: Deps): void {
  app.get('/healthz', async () => ({ ok: true }));
  deps.windowCounters.useLog?.(app.log);
  deps.database.useLog?.(app.log);
  // Once every migration has run it stays run: later answers skip that query.
  let migrated = false;
  app.get('/readyz', async (request, reply) => {
    const isDraining = draining.has(app);
    const state = await readiness(deps, isDraining, migrated);
    migrated = state.checks.migrations === 'up';
    reply.header('cache-control', 'no-store');
    const failure = state.ready
      ? undefined
      : deps.database.storage?.unwritable
        ? errors.unwritable()
        : errors.unavailable();
    if (failure) reply.code(failure.status).headers(failure.headers());
    if (/\btext\/plain\b/.test(request.headers.accept ?? ''))
      return reply.type('text/plain; charset=utf-8').send(`${state.lines.join('\n')}\n`);
    const summary = {
      checks: state.checks,
      draining: isDraining,
      ...(state.lookupCache ? { lookup_cache: state.lookupCache } : {}),
      detail: state.lines,
    };
    return failure ? { ...failure.body(request.id), ...summary } : { ok: true, ...summary };
  });
}

/** Runs each check within a second; a check that throws or does not answer in time is down. */
async function within(check: () => Promise<unknown>): Promise<CheckState> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), 1000);
  });
  try {
    const answered = await Promise.race([check().then((value) => value !== false), late]);
    return answered ? 'up' : 'down';
  } catch {
    return 'down';
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The database answers, and, while it could not write (StorageCondition), a probe write commits:
 * the instance a load balancer took out of service for it comes back once space is freed, with no
 * request of its own to clear the condition.
 */
async function databaseAnswers(deps: Deps): Promise<boolean> {
  await probe(deps.db);
  const { storage, probeWrite } = deps.database;
  if (storage?.unwritable && probeWrite) await probeWrite().catch(() => {});
  return !storage?.unwritable;
}

/** What the database line says when its check is down. */
function databaseDown(deps: Deps): string {
  const { engine, storage } = deps.database;
  const unwritable = storage?.unwritable;
  if (!unwritable) return `database: down (${engine} did not answer within 1 s)`;
  const since = new Date(unwritable.since).toISOString();
  return `database: down (${engine} cannot write since ${since}: ${unwritable.code}, ${unwritable.message})`;
}

async function readiness(deps: Deps, isDraining: boolean, migrated: boolean): Promise<Readiness> {
  let pending: string[] = [];
  const [database, migrations, redis] = await Promise.all([
    within(() => databaseAnswers(deps)),
    migrated
      ? ('up' as const)
      : within(async () => {
          pending = await pendingMigrations(deps.db);
          return pending.length === 0;
        }),
    deps.windowCounters.ready ? within(() => deps.windowCounters.ready!()) : undefined,
  ]);
  const checks: Record<string, CheckState> = { database, migrations };
  const lines = [
    database === 'up' ? `database: up (${deps.database.engine})` : databaseDown(deps),
    migrations === 'up'
      ? 'migrations: up (all applied)'
      : pending.length
        ? `migrations: down (not applied: ${pending.join(', ')})`
        : 'migrations: down (could not be read)',
  ];
  if (redis) {
    checks.redis = redis;
    lines.push(redis === 'up' ? 'redis: up' : 'redis: down (rate counters fall back to this instance)');
  }
  lines.push(isDraining ? 'draining: yes (SIGTERM received; finishing requests in flight)' : 'draining: no');
  const cache = deps.database.engine === 'postgres' ? deps.database.authCache : undefined;
  const lookupCache = cache ? (cache.active ? 'on' : 'off') : undefined;
  if (lookupCache === 'on') lines.push('lookup cache: on (change listener connected)');
  if (lookupCache === 'off')
    lines.push('lookup cache: off (change listener down: every lookup reads the database, exact but slower)');
  const ready = !isDraining && Object.values(checks).every((check) => check === 'up');
  lines.unshift(ready ? 'ready' : 'not ready');
  return { ready, checks, lines, lookupCache };
}
