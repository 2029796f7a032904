// Per-minute limits across a Redis outage, on every instance at once: Redis killed and started again
// empty (it runs without persistence), or silent for a while and back with its windows. The
// instances count in the database (memory on the embedded engine's one process) from what Redis had
// counted, and seed Redis from there before counting in it again. The bound asserted is the one
// docs/deployment.md states: at most the limit plus the requests in flight when Redis went away.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { Redis } from 'ioredis';
import { MS } from '../src/clock.ts';
import type { RedisWindowCounters } from '../src/storage/redis-window-counters.ts';
import { type CallResponse, freePort, startTestApp, type TestApp } from './support/app.ts';
import { engines, freshDatabase } from './support/databases.ts';
import { LocalRedis, redisServer } from './support/local-redis.ts';
import { waitUntil } from './support/wait.ts';

const LIMIT = 12;
/** Requests sent at once just before Redis goes away: the bound allows for those in flight then. */
const IN_FLIGHT = 6;
const PREFIX = 'outage';

const store = (app: TestApp) => app.deps.windowCounters as RedisWindowCounters;
const accepted = (answers: CallResponse[]) => answers.filter((a) => a.status === 200).length;

interface Outage {
  name: string;
  /** Takes Redis away (and `end` brings it back); `admin` is a connection of the test's own. */
  begin(redis: LocalRedis, admin: Redis): Promise<void>;
  end(redis: LocalRedis, admin: Redis): Promise<void>;
}

const outages: Outage[] = [
  {
    name: 'killed and started again empty',
    begin: (redis) => redis.stop(),
    end: (redis) => redis.start(),
  },
  {
    // The connections stay open and every count times out: no close tells the instances.
    name: 'silent, its windows kept',
    begin: async (_redis, admin) => {
      await admin.call('CLIENT', 'PAUSE', String(MS.minute), 'WRITE');
    },
    end: async (_redis, admin) => {
      await admin.call('CLIENT', 'UNPAUSE');
    },
  },
];

async function story(t: TestContext, engine: 'sqlite' | 'postgres', outage: Outage) {
  // PostgreSQL: two instances sharing the database; the embedded engine is one process.
  const count = engine === 'postgres' ? 2 : 1;
  const redis = new LocalRedis(await freePort());
  await redis.start();
  const admin = new Redis(redis.url, { retryStrategy: () => 200 });
  admin.on('error', () => {});
  const database = await freshDatabase(engine);
  const instances: TestApp[] = [];
  try {
    for (let i = 0; i < count; i++)
      instances.push(
        await startTestApp({
          database,
          limits: { anonymousPerMinute: LIMIT },
          config: { redisUrl: redis.url, redisKeyPrefix: PREFIX },
        }),
      );
    // Every instance one second into the same minute: the whole story below is one window.
    const minute = Math.ceil(instances[0].clock.now() / MS.minute) * MS.minute;
    for (const app of instances) app.clock.set(minute + MS.second);
    let turn = 0;
    const send = () => instances[turn++ % count].call('GET', '/api/agent/setup-check');
    const inTurn = async (n: number) => {
      const answers = [];
      for (let i = 0; i < n; i++) answers.push(await send());
      return answers;
    };

    const before = await inTurn(LIMIT / 2);
    assert.equal(accepted(before), LIMIT / 2, 'counted in Redis');
    // A burst still under way when Redis goes away.
    const burst = Promise.all(Array.from({ length: IN_FLIGHT }, send));
    await outage.begin(redis, admin);
    const burstAnswers = await burst;
    await waitUntil(() => instances.every((app) => store(app).degraded), 'every instance to see Redis gone');
    const during = await inTurn(LIMIT);
    await outage.end(redis, admin);
    await waitUntil(() => instances.every((app) => !store(app).degraded), 'every instance to see Redis back');
    const after = await inTurn(LIMIT);

    const answers = [...before, ...burstAnswers, ...during, ...after];
    const statuses = answers.map((a) => a.status);
    const total = accepted(answers);
    t.diagnostic(
      `${outage.name}, ${count} instance(s): ${total} of ${answers.length} accepted, limit ${LIMIT}`,
    );
    assert.ok(total <= LIMIT + IN_FLIGHT, `accepted ${total}: ${statuses.join(',')}`);
    assert.ok(total >= LIMIT - IN_FLIGHT, `accepted ${total}: ${statuses.join(',')}`);
    assert.equal(accepted(after), 0, 'Redis back does not start the window again');
    assert.deepEqual(
      statuses.filter((s) => s !== 200 && s !== 429),
      [],
      'nothing failed',
    );
    // Redis holds the outage's window again, seeded with every hit (but those in flight).
    const windowKey = (start: number) => `${PREFIX}:rate:anonymous:127.0.0.1:${start}`;
    const seeded = Number(await admin.get(windowKey(minute)));
    assert.ok(Math.abs(seeded - answers.length) <= IN_FLIGHT, `Redis holds ${seeded} of ${answers.length}`);

    // The next window is counted in Redis from zero.
    for (const app of instances) app.clock.advance(MS.minute);
    const next = await inTurn(LIMIT + 2);
    assert.equal(accepted(next), LIMIT);
    assert.equal(Number(await admin.get(windowKey(minute + MS.minute))), LIMIT + 2);
  } finally {
    for (const app of instances) await app.close();
    await database.drop();
    admin.disconnect();
    await redis.stop();
  }
}

for (const engine of engines)
  for (const outage of outages)
    test(
      `a per-minute limit holds when Redis is ${outage.name} (${engine.name})`,
      {
        skip: engine.skip || (redisServer ? false : 'redis-server is not installed'),
      },
      (t) => story(t, engine.name, outage),
    );
