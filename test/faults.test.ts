// Faults of the parts the service stands on: the real server process runs against a
// PostgreSQL cluster and a Redis this file starts itself, under a steady write load, while PostgreSQL
// is restarted, then stopped for 10 s, then Redis is stopped for 10 s. The process must stay up,
// never answer 500, answer 503 (Error shape, Retry-After) while the database is away, lose no
// acknowledged write, and serve again within seconds of each part's return.
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { promisify } from 'node:util';
import pg from 'pg';
import { isContention, isDependencyUnavailable, toApiError } from '../src/core/errors.ts';
import { closedPort, freePort } from './support/app.ts';
import { LocalRedis, redisServer } from './support/local-redis.ts';
import { killAllChildren, runCli, runCliJson, type ServerProcess, startServer } from './support/processes.ts';
import { clearOfMinuteEnd } from './support/wait.ts';

const OUTAGE_MS = 10_000;
const CLIENTS = 4;
const BOOKINGS = 12;

function findPostgresBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length ? join(root, versions[0], 'bin') : undefined;
}

const pgBin = findPostgresBin();
const missing = [!pgBin && 'initdb/pg_ctl (/usr/lib/postgresql/*/bin)', !redisServer && 'redis-server']
  .filter(Boolean)
  .join(' and ');
const skip =
  missing && !process.env.REQUIRE_POSTGRES
    ? `the fault tests start their own PostgreSQL and Redis: ${missing} not installed`
    : false;

/** initdb and postgres refuse to run as root: then they run as the postgres user. */
const asRoot = process.getuid?.() === 0;
const execFileAsync = promisify(execFile);
/** Asynchronous, so the load keeps flowing while PostgreSQL stops, starts or restarts. */
async function pgCommand(tool: string, args: string[]): Promise<void> {
  const path = join(pgBin!, tool);
  const [command, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', path, ...args]] : [path, args];
  await execFileAsync(command, argv, { timeout: 60_000 });
}

class LocalPostgres {
  readonly port: number;
  readonly dir = mkdtempSync(join(tmpdir(), 'faults-pg-'));
  readonly data = join(this.dir, 'data');
  private constructor(port: number) {
    this.port = port;
    if (asRoot) {
      const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
      const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
      chownSync(this.dir, uid, gid);
    }
    chmodSync(this.dir, 0o700);
  }
  static async create(port: number): Promise<LocalPostgres> {
    const cluster = new LocalPostgres(port);
    await pgCommand('initdb', [
      '-D',
      cluster.data,
      '-U',
      'postgres',
      '--auth=trust',
      '-E',
      'UTF8',
      '--no-sync',
    ]);
    return cluster;
  }
  private ctl(action: string, extra: string[] = []) {
    const options = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
    const log = join(this.dir, 'log');
    return pgCommand('pg_ctl', [
      action,
      '-D',
      this.data,
      '-w',
      '-t',
      '30',
      '-o',
      options,
      '-l',
      log,
      ...extra,
    ]);
  }
  start() {
    return this.ctl('start');
  }
  /** Fast: every session is terminated (57P01), as an operator's restart does. */
  stop() {
    return pgCommand('pg_ctl', ['stop', '-D', this.data, '-w', '-m', 'fast']);
  }
  restart() {
    return this.ctl('restart', ['-m', 'fast']);
  }
  url(database: string) {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }
  async remove() {
    await this.stop().catch(() => {});
    rmSync(this.dir, { recursive: true, force: true });
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Answer {
  at: number;
  /** How long the answer took. */
  ms: number;
  status: number;
  kind: 'write' | 'read';
  ticket?: string;
  body: Record<string, unknown>;
  retryAfter: string | null;
}

/** CLIENTS writers posting feedback one after another, and one reader, until stopped. */
function steadyLoad(baseUrl: string) {
  const answers: Answer[] = [];
  const failures: string[] = [];
  let running = true;
  let sequence = 0;
  const call = async (kind: Answer['kind'], init: () => [string, RequestInit]) => {
    const [path, request] = init();
    const began = Date.now();
    try {
      const response = await fetch(`${baseUrl}${path}`, { ...request, signal: AbortSignal.timeout(8000) });
      const body = (await response.json()) as Record<string, unknown>;
      answers.push({
        at: Date.now(),
        ms: Date.now() - began,
        status: response.status,
        kind,
        ticket: typeof body.ticket_id === 'string' ? body.ticket_id : undefined,
        body,
        retryAfter: response.headers.get('retry-after'),
      });
    } catch (error) {
      failures.push(`${kind} ${path}: ${(error as Error).message}`);
      await sleep(100);
    }
  };
  const writer = async (client: number) => {
    while (running) {
      await call('write', () => [
        '/api/agent/feedback',
        {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ message: `fault load ${client}-${sequence++}`, kind: 'other' }),
        },
      ]);
    }
  };
  const reader = async () => {
    while (running) {
      await call('read', () => ['/api/events/upcoming', {}]);
      await sleep(20);
    }
  };
  const done = Promise.all([...Array.from({ length: CLIENTS }, (_, i) => writer(i)), reader()]);
  return {
    answers,
    failures,
    async stop() {
      running = false;
      await done;
    },
  };
}

/** Milliseconds from `since` to the first acknowledged write after it. */
async function firstWriteAfter(
  answers: Answer[],
  since: number,
  server: ServerProcess,
  limitMs = 20_000,
): Promise<number> {
  const deadline = Date.now() + limitMs;
  while (Date.now() < deadline) {
    if (server.child.exitCode !== null || server.child.signalCode !== null)
      throw new Error(`the server exited: ${server.stdout()}${server.stderr()}`.slice(0, 4000));
    const first = answers.find((a) => a.kind === 'write' && a.status === 201 && a.at >= since);
    if (first) return first.at - since;
    await sleep(20);
  }
  throw new Error(`no write was acknowledged within ${limitMs} ms of the part's return`);
}

async function readyz(baseUrl: string) {
  const response = await fetch(`${baseUrl}/readyz`, { signal: AbortSignal.timeout(5000) });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

let postgres: LocalPostgres | undefined;
let redis: LocalRedis | undefined;
after(async () => {
  await killAllChildren();
  await redis?.stop();
  await postgres?.remove();
});

test('a PostgreSQL restart, a PostgreSQL outage and a Redis outage under write load', {
  skip,
  timeout: 120_000,
}, async (t) => {
  postgres = await LocalPostgres.create(await freePort());
  await postgres.start();
  const admin = new pg.Client({ connectionString: postgres.url('postgres') });
  await admin.connect();
  await admin.query('CREATE DATABASE faults');
  await admin.end();
  redis = new LocalRedis(await freePort());
  await redis.start();
  const url = postgres.url('faults');

  // A member, a token and one idempotent write settled before any fault.
  const member = await runCliJson(url, [
    'member',
    'create',
    '--email',
    'faults@test.example',
    '--name',
    'Fay Fault',
    '--tier',
    'core',
  ]);
  const minted = await runCliJson(url, [
    'token',
    'mint',
    '--member',
    member.id,
    '--scopes',
    'events:submit_recap,resources:book',
  ]);
  const room = await runCli(url, [
    'resource',
    'add',
    'room-f',
    '--name',
    'Room F',
    '--weekdays',
    '00:00-24:00',
    '--weekends',
    '00:00-24:00',
  ]);
  assert.equal(room.code, 0, room.stderr);
  const server: ServerProcess = await startServer(url, {
    args: ['--no-seed'],
    env: {
      REDIS_URL: `redis://127.0.0.1:${redis.port}`,
      LIMIT_FEEDBACK_PER_HOUR: '1000000',
      LIMIT_ANONYMOUS_PER_MINUTE: '1000000',
      LIMIT_TOKEN_PER_MINUTE: '1000000',
      LIMIT_BOOKINGS_PER_DAY: '1000',
      // A pass every 5 s: bookings queued just before the outage are still queued when it starts.
      WORKER_INTERVAL_SECONDS: '5',
      WORKER_LEASE_SECONDS: '3',
      DATABASE_CONNECT_TIMEOUT_MS: '1000',
      DATABASE_STATEMENT_TIMEOUT_MS: '5000',
    },
  });
  let exitedEarly = false;
  void server.exited.then(() => {
    exitedEarly = true;
  });
  const story = {
    id: '2026-11-24-faults-story',
    event_title: 'Fault night',
    dek: 'claimed before the fault',
  };
  const submitStory = () =>
    fetch(`${server.baseUrl}/api/ingest/highlights/pending`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${minted.token}`,
        'content-type': 'application/json',
        'idempotency-key': 'faults-before',
      },
      body: JSON.stringify(story),
    });
  const first = await submitStory();
  const firstBody = await first.json();
  assert.equal(first.status, 202, JSON.stringify(firstBody));
  assert.deepEqual((await readyz(server.baseUrl)).status, 200);

  const load = steadyLoad(server.baseUrl);
  t.after(() => load.stop());
  await sleep(1500);

  // 0. The server's sessions are terminated again and again (57P01, as pg_terminate_backend or a
  // failover does), catching connections in every state: idle, mid-query, mid-transaction.
  const killer = new pg.Client({ connectionString: postgres.url('postgres') });
  await killer.connect();
  let terminated = 0;
  for (let round = 0; round < 40; round++) {
    const result = await killer.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'faults' AND pid <> pg_backend_pid()",
    );
    terminated += result.rowCount ?? 0;
    await sleep(25 + (round % 4) * 10);
  }
  await killer.end();
  const afterTerminateMs = await firstWriteAfter(load.answers, Date.now(), server);
  assert.equal(exitedEarly, false, `the server exited when its sessions were terminated: ${server.stderr()}`);
  await sleep(500);

  // 1. Restart: every pooled session is terminated with 57P01.
  const restartBegan = Date.now();
  await postgres.restart();
  const restartedAt = Date.now();
  const afterRestartMs = await firstWriteAfter(load.answers, restartedAt, server);
  await sleep(1500);

  // 2. Stopped for 10 s, with bookings queued for the workers just before.
  const firstSlot = Date.UTC(new Date().getUTCFullYear() + 1, 0, 5, 8);
  const booked = await Promise.all(
    Array.from({ length: BOOKINGS }, async (_, i) => {
      const response = await fetch(`${server.baseUrl}/api/resources/book`, {
        method: 'POST',
        headers: { authorization: `Bearer ${minted.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          resource_id: 'room-f',
          start_iso: new Date(firstSlot + i * 3_600_000).toISOString(),
          end_iso: new Date(firstSlot + (i + 1) * 3_600_000).toISOString(),
          email: 'fay@test.example',
        }),
      });
      return { status: response.status, body: await response.text() };
    }),
  );
  assert.deepEqual(
    booked.filter((b) => b.status !== 202),
    [],
    'every booking was queued',
  );
  const peek = new pg.Client({ connectionString: url });
  await peek.connect();
  const queuedAtStop = (await peek.query("SELECT count(*)::int AS n FROM bookings WHERE status = 'queued'"))
    .rows[0].n;
  await peek.end();
  await postgres.stop();
  const stoppedAt = Date.now();
  await sleep(1000);
  const downReady = await readyz(server.baseUrl);
  assert.equal(downReady.status, 503);
  assert.equal(downReady.body.error, 'service_unavailable');
  assert.equal(downReady.body.checks.database, 'down');
  // The change listener's connection went with the server: lookups read the database (none answers).
  assert.equal(downReady.body.lookup_cache, 'off');
  await sleep(OUTAGE_MS - 1000);
  const startBegan = Date.now();
  await postgres.start();
  const pgBackAt = Date.now();
  const pgRecoveryMs = await firstWriteAfter(load.answers, pgBackAt, server);
  assert.equal((await readyz(server.baseUrl)).status, 200);
  // Answers that arrived while it was down (not those on their way when it stopped or restarted).
  const duringPgOutage = load.answers.filter((a) => a.at > stoppedAt + 500 && a.at < startBegan);
  // The workers take the queue up again by themselves; each booking is decided once.
  let bookingsSettledMs = -1;
  const queue = new pg.Client({ connectionString: url });
  await queue.connect();
  try {
    while (Date.now() - pgBackAt < 20_000) {
      const left = await queue.query("SELECT count(*)::int AS n FROM bookings WHERE status = 'queued'");
      if (left.rows[0].n === 0) {
        bookingsSettledMs = Date.now() - pgBackAt;
        break;
      }
      await sleep(100);
    }
    assert.ok(bookingsSettledMs >= 0, 'the queued bookings were decided after the outage');
    const bookings = await queue.query<{ id: string; status: string }>('SELECT id, status FROM bookings');
    assert.equal(bookings.rows.length, BOOKINGS);
    assert.ok(
      bookings.rows.every((b) => b.status === 'confirmed'),
      JSON.stringify(bookings.rows),
    );
    const decided = await queue.query<{ id: string; n: number }>(
      `SELECT target::json->>'booking_id' AS id, count(*)::int AS n FROM event_log
       WHERE type IN ('booking_confirmed', 'booking_declined') GROUP BY 1`,
    );
    assert.deepEqual(
      decided.rows.map((r) => [r.id, r.n]).sort(),
      bookings.rows.map((b) => [b.id, 1]).sort(),
      'one decision recorded per booking',
    );
  } finally {
    await queue.end();
  }
  await sleep(1500);

  // 3. Redis away for 10 s: the per-minute windows fall back to memory, nothing fails.
  await redis.stop();
  const redisDownAt = Date.now();
  await sleep(1000);
  const redisDown = await readyz(server.baseUrl);
  assert.equal(redisDown.status, 503);
  assert.deepEqual(redisDown.body.checks, { database: 'up', migrations: 'up', redis: 'down' });
  await sleep(OUTAGE_MS - 1000);
  await redis.start();
  const redisBackAt = Date.now();
  let redisRecoveryMs = -1;
  while (Date.now() - redisBackAt < 10_000) {
    if ((await readyz(server.baseUrl)).status === 200) {
      redisRecoveryMs = Date.now() - redisBackAt;
      break;
    }
    await sleep(50);
  }
  await sleep(1000);
  await load.stop();
  const duringRedisOutage = load.answers.filter((a) => a.at > redisDownAt && a.at < redisBackAt);

  // The process is up and never crashed.
  assert.equal(exitedEarly, false, `the server exited: ${server.stderr()}`);
  assert.equal(server.child.exitCode, null);
  assert.doesNotMatch(server.stdout() + server.stderr(), /Unhandled|uncaught/i);

  // No 500; every failure is a 503 in the Error shape with Retry-After.
  const writes = load.answers.filter((a) => a.kind === 'write');
  const statuses = new Map<number, number>();
  for (const a of load.answers) statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
  const unexpected = load.answers.filter(
    (a) => a.status !== 503 && !(a.kind === 'write' ? a.status === 201 : a.status === 200),
  );
  assert.deepEqual(unexpected.slice(0, 3), [], 'only 201/200 and 503');
  assert.deepEqual(load.failures, [], 'every request got an answer');
  const unavailable = load.answers.filter((a) => a.status === 503);
  for (const a of unavailable) {
    assert.equal(a.body.error, 'service_unavailable');
    assert.equal(a.body.error_kind, 'unavailable');
    assert.equal(typeof a.body.request_id, 'string');
    assert.equal(a.retryAfter, '2');
    assert.equal(a.body.retry_after_seconds, 2);
  }
  // While PostgreSQL was stopped, writes were answered 503, promptly and only that.
  const outageWrites = duringPgOutage.filter((a) => a.kind === 'write');
  assert.ok(outageWrites.length > 20, `${outageWrites.length} writes answered during the outage`);
  assert.ok(
    outageWrites.every((a) => a.status === 503),
    'every write during the outage is a 503',
  );
  // While Redis was stopped, nothing failed.
  assert.ok(duringRedisOutage.length > 20);
  assert.ok(
    duringRedisOutage.every((a) => a.status === 201 || a.status === 200),
    'Redis away: no failure',
  );

  // Every acknowledged write is stored, once.
  const acknowledged = writes.filter((a) => a.status === 201).map((a) => a.ticket!);
  const check = new pg.Client({ connectionString: url });
  await check.connect();
  try {
    const stored = await check.query<{ ticket_id: string }>('SELECT ticket_id FROM feedback');
    const storedIds = new Set(stored.rows.map((r) => r.ticket_id));
    const lost = acknowledged.filter((id) => !storedIds.has(id));
    // Writes stored though their answer was a 503 (a COMMIT in flight when the connection dropped).
    const storedLoad = (
      await check.query("SELECT count(*)::int AS n FROM feedback WHERE message LIKE 'fault load %'")
    ).rows[0].n;
    assert.deepEqual(lost, [], 'no acknowledged write is lost');
    assert.equal(new Set(acknowledged).size, acknowledged.length);

    // The key claimed before the faults is honoured after them: replayed, not run again.
    const again = await submitStory();
    assert.equal(again.status, 202);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(await again.json(), firstBody);
    const stories = await check.query('SELECT count(*)::int AS n FROM highlights WHERE id = $1', [story.id]);
    assert.equal(stories.rows[0].n, 1);

    const latencies = unavailable.map((a) => a.ms).sort((x, y) => x - y);
    const figures = {
      requests: load.answers.length,
      writes: writes.length,
      acknowledged: acknowledged.length,
      unavailable_503: unavailable.length,
      status_500: statuses.get(500) ?? 0,
      median_503_ms: latencies[Math.floor(latencies.length / 2)],
      p99_503_ms: latencies[Math.floor(latencies.length * 0.99)],
      max_503_ms: latencies.at(-1),
      sessions_terminated: terminated,
      terminate_recovery_ms: afterTerminateMs,
      restart_took_ms: restartedAt - restartBegan,
      restart_recovery_ms: afterRestartMs,
      pg_outage_503: outageWrites.length,
      pg_recovery_ms: pgRecoveryMs,
      bookings_queued_at_stop: queuedAtStop,
      bookings_settled_after_ms: bookingsSettledMs,
      redis_outage_requests: duringRedisOutage.length,
      redis_recovery_ms: redisRecoveryMs,
      lost: lost.length,
      stored_though_503: storedLoad - acknowledged.length,
    };
    t.diagnostic(`figures ${JSON.stringify(figures)}`);
    console.log('fault figures', figures);
  } finally {
    await check.end();
  }

  // A 503 is quick: bounded by DATABASE_CONNECT_TIMEOUT_MS (1 s here), not by the outage.
  assert.ok(
    outageWrites.every((a) => a.ms < 2500),
    `slowest 503 during the outage: ${Math.max(...outageWrites.map((a) => a.ms))} ms`,
  );
  assert.ok(afterRestartMs < 5000, `served ${afterRestartMs} ms after the restart`);
  assert.ok(pgRecoveryMs < 5000, `served ${pgRecoveryMs} ms after PostgreSQL came back`);
  assert.ok(
    redisRecoveryMs >= 0 && redisRecoveryMs < 5000,
    `ready ${redisRecoveryMs} ms after Redis came back`,
  );
  // One line when Redis went away, one when it came back.
  const log = server.stdout() + server.stderr();
  assert.equal(log.match(/Redis unavailable/g)?.length ?? 0, 1, log);
  assert.equal(log.match(/Redis is back/g)?.length ?? 0, 1, log);
});

test('with Redis away the per-minute limits hold in process memory on the embedded engine, and move back to Redis with their counts when it returns', {
  skip: redisServer || process.env.REQUIRE_REDIS ? false : 'redis-server is not installed',
  timeout: 60_000,
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'faults-redis-'));
  const absent = new LocalRedis(await freePort());
  try {
    // Redis is not running when the server starts: it boots, serves and limits all the same.
    const server = await startServer(`sqlite:${join(dir, 'agent.db')}`, {
      args: ['--no-seed'],
      env: { REDIS_URL: `redis://127.0.0.1:${absent.port}`, LIMIT_ANONYMOUS_PER_MINUTE: '5' },
    });
    const read = async () => {
      const response = await fetch(`${server.baseUrl}/api/events/upcoming`);
      const body = (await response.json()) as Record<string, unknown>;
      return { status: response.status, body, retryAfter: response.headers.get('retry-after') };
    };
    const answers = [];
    await clearOfMinuteEnd();
    for (let i = 0; i < 7; i++) answers.push(await read());
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 200, 200, 200, 200, 429, 429],
    );
    assert.equal(answers[5].body.error_kind, 'rate_limit');
    assert.ok(Number(answers[5].retryAfter) > 0);
    const down = await readyz(server.baseUrl);
    assert.equal(down.status, 503);
    assert.deepEqual(down.body.checks, { database: 'up', migrations: 'up', redis: 'down' });
    assert.equal(down.body.error, 'service_unavailable');

    // Redis arrives: readiness follows, and the windows are counted in Redis again, seeded with
    // what memory counted meanwhile: the minute does not start again.
    await absent.start();
    const deadline = Date.now() + 10_000;
    while ((await readyz(server.baseUrl)).status !== 200) {
      assert.ok(Date.now() < deadline, 'ready once Redis answers');
      await sleep(50);
    }
    assert.equal((await read()).status, 429);
    const keys = spawnSync('redis-cli', ['-p', String(absent.port), '--scan', '--pattern', '*:rate:*'], {
      encoding: 'utf8',
    });
    const windowKey = keys.stdout
      .split('\n')
      .find((key) => /^agent-commons:rate:anonymous:.+:\d+$/.test(key));
    assert.ok(windowKey, keys.stdout);
    const counted = spawnSync('redis-cli', ['-p', String(absent.port), 'get', windowKey], {
      encoding: 'utf8',
    });
    assert.equal(counted.stdout.trim(), '8');
    assert.equal(server.child.exitCode, null);
    // The log is written asynchronously: on a busy machine its lines can trail the answers.
    const logged = Date.now() + 5_000;
    let log = server.stdout() + server.stderr();
    while (!(/Redis unavailable/.test(log) && /Redis is back/.test(log)) && Date.now() < logged) {
      await sleep(50);
      log = server.stdout() + server.stderr();
    }
    assert.equal(log.match(/Redis unavailable/g)?.length ?? 0, 1, log);
    assert.equal(log.match(/Redis is back/g)?.length ?? 0, 1, log);
    assert.doesNotMatch(log, /Unhandled|ioredis/);
    await server.kill('SIGTERM');
  } finally {
    await absent.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the one error mapping: a database that is away is 503 service_unavailable, anything else stays 500', async () => {
  // A real refused connection, as the pool reports it.
  const refused = await new pg.Client({
    host: '127.0.0.1',
    port: await closedPort(),
    connectionTimeoutMillis: 2000,
  })
    .connect()
    .then(
      () => undefined,
      (error: unknown) => error,
    );
  const away = [
    refused,
    Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
    Object.assign(new Error('the database system is starting up'), { code: '57P03' }),
    Object.assign(new Error('connection failure'), { code: '08006' }),
    Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }),
    new Error('Connection terminated unexpectedly'),
    new Error('timeout exceeded when trying to connect'),
    new AggregateError([Object.assign(new Error('connect ECONNREFUSED ::1:5432'), { code: 'ECONNREFUSED' })]),
  ];
  for (const error of away) {
    const mapped = toApiError(error);
    assert.equal(mapped.status, 503, String(error));
    assert.deepEqual(mapped.body('r1'), {
      error: 'service_unavailable',
      error_kind: 'unavailable',
      message: 'The service cannot reach its database right now; retry shortly.',
      retry_after_seconds: 2,
      request_id: 'r1',
    });
    assert.deepEqual(mapped.headers(), { 'retry-after': '2' });
  }
  for (const error of [
    Object.assign(new Error('syntax error at or near "selec"'), { code: '42601' }),
    Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' }),
    new TypeError('x is undefined'),
    'a string',
  ]) {
    assert.equal(toApiError(error).status, 500, String(error));
  }
});

test('a transaction that lost to concurrent writes is 503 service_unavailable saying so, not that the database is away', () => {
  for (const [code, message] of [
    ['40P01', 'deadlock detected'],
    ['40001', 'could not serialize access due to concurrent update'],
  ]) {
    const error = Object.assign(new Error(message), { code });
    assert.equal(isContention(error), true, code);
    assert.equal(isDependencyUnavailable(error), false, code);
    const mapped = toApiError(error);
    assert.equal(mapped.status, 503, code);
    assert.deepEqual(mapped.body('r2'), {
      error: 'service_unavailable',
      error_kind: 'unavailable',
      message: 'The request lost a race with concurrent writes and was rolled back; retry shortly.',
      retry_after_seconds: 2,
      request_id: 'r2',
    });
    assert.deepEqual(mapped.headers(), { 'retry-after': '2' });
  }
});
