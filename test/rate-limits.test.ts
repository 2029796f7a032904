import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { parseList, serializeList } from 'structured-headers';
import { MS } from '../src/clock.ts';
import { outcomeFor, type RatePolicy, rateLimitHeaders } from '../src/core/rate-limit.ts';
import { counters } from '../src/storage/counters.ts';
import { openDatabase } from '../src/storage/database.ts';
import { migrateToLatest } from '../src/storage/migrations.ts';
import { RedisWindowCounters } from '../src/storage/redis-window-counters.ts';
import {
  DatabaseWindowCounters,
  type FallbackWindowCounterStore,
  MemoryWindowCounters,
  type WindowCounterStore,
} from '../src/storage/window-counters.ts';
import { closedPort, startTestApp } from './support/app.ts';
import { engines, freshDatabase } from './support/databases.ts';

const redisUrl = process.env.TEST_REDIS_URL;
const redisSkip = redisUrl ? false : 'Redis not reachable (set TEST_REDIS_URL)';

test('RateLimit headers are the RFC 9651 lists the structured-headers serializer prints', () => {
  const now = Date.UTC(2026, 6, 16, 12, 0, 30);
  const policies: RatePolicy[] = [
    { name: 'token', limit: 1200, window: 60, per: 'token' },
    { name: 'highlights', limit: 3, window: 'utc_day', per: 'token' },
  ];
  const outcomes = [outcomeFor(policies[0], 7, now), outcomeFor(policies[1], 3, now)];
  const headers = rateLimitHeaders(outcomes);
  const expected = serializeList(
    outcomes.map((o) => [
      o.policy.name,
      new Map([
        ['r', Math.max(0, o.policy.limit - o.count)],
        ['t', o.resetSeconds],
      ]),
    ]),
  );
  assert.equal(headers.ratelimit, expected);
  assert.equal(headers.ratelimit, '"token";r=1193;t=30, "highlights";r=0;t=43170');
  assert.equal(headers['ratelimit-policy'], '"token";q=1200;w=60, "highlights";q=3;w=86400');
  const parsed = parseList(headers['ratelimit-policy']);
  assert.deepEqual(
    parsed.map(([name, params]) => [name, params.get('q'), params.get('w')]),
    [
      ['token', 1200, 60],
      ['highlights', 3, 86400],
    ],
  );
  // The legacy trio follows the tightest policy.
  assert.equal(headers['ratelimit-limit'], '3');
  assert.equal(headers['ratelimit-remaining'], '0');
  assert.equal(headers['ratelimit-reset'], '43170');
});

async function contract(store: WindowCounterStore) {
  const key = `contract:${randomBytes(4).toString('hex')}`;
  const expiresAt = Date.now() + MS.minute;
  const counts = await Promise.all(Array.from({ length: 200 }, () => store.hit(key, expiresAt, Date.now())));
  assert.deepEqual(
    [...counts].sort((a, b) => a - b),
    Array.from({ length: 200 }, (_, i) => i + 1),
    'every concurrent hit gets its own count',
  );
  assert.equal(
    await store.hit(`${key}:next-window`, expiresAt, Date.now()),
    1,
    'another window starts at one',
  );
}

describe('window counter stores', () => {
  test('memory: exact under concurrency', async () => {
    const store = new MemoryWindowCounters();
    await contract(store);
    await store.close();
  });

  for (const engine of engines) {
    test(`database (${engine.name}): exact under concurrency, and stored`, {
      skip: engine.skip,
    }, async () => {
      const target = await freshDatabase(engine.name);
      const database = openDatabase(target.url);
      try {
        await migrateToLatest(database.db);
        const store = new DatabaseWindowCounters(database.db, database.engine);
        await contract(store);
        const rows = await database.db.selectFrom('counters').select(['key', 'count']).execute();
        assert.equal(rows.length, 2);
        assert.equal(Math.max(...rows.map((r) => Number(r.count))), 200);
        if (engine.name === 'postgres') {
          // The lazy commit is the hit's own: no pooled connection keeps it for the next statement,
          // and a transaction (a user's write) is refused rather than made lazy.
          const settings = await Promise.all(
            Array.from({ length: 20 }, () =>
              sql<{ value: string }>`select current_setting('synchronous_commit') as value`.execute(
                database.db,
              ),
            ),
          );
          assert.deepEqual(new Set(settings.map((r) => r.rows[0].value)), new Set(['on']));
          await assert.rejects(
            database.db
              .transaction()
              .execute((trx) =>
                counters.hitManyCommittedLazily(trx, ['in-a-transaction'], [1], [Date.now() + 60_000]),
              ),
            /never inside one/,
          );
        }
      } finally {
        await database.close();
        await target.drop();
      }
    });
  }

  /** What Redis hands a fallback store when it goes away, and what the store hands back. */
  async function handover(store: FallbackWindowCounterStore) {
    const now = Date.UTC(2026, 6, 16, 12, 0, 10);
    const minute = now - (now % MS.minute);
    const end = minute + MS.minute;
    const window = (name: string) => `anonymous:${name}:${minute}`;
    await store.hit(window('ahead'), end, now);
    await store.hit(window('ahead'), end, now);
    await store.raise([
      { key: window('behind'), count: 7, expiresAt: end },
      { key: window('ahead'), count: 1, expiresAt: end },
    ]);
    assert.equal(await store.hit(window('behind'), end, now), 8, 'counts on from what Redis had');
    assert.equal(await store.hit(window('ahead'), end, now), 3, 'a higher count is kept');
    // An hourly window ending within the minute is not a short one: Redis never holds it.
    await store.hit(`hourly:x:${end - MS.hour}`, end, now);
    await store.hit(window('ended').replace(`${minute}`, `${minute - MS.minute}`), minute, now);
    const open = await store.openWindows(now);
    assert.deepEqual(open.map((w) => [w.key, w.count, w.expiresAt]).sort(), [
      [window('ahead'), 3, end],
      [window('behind'), 8, end],
    ]);
  }

  test('memory: takes over the counts Redis had, and hands back its open windows', async () => {
    await handover(new MemoryWindowCounters());
  });
  for (const engine of engines)
    test(`database (${engine.name}): takes over the counts Redis had, and hands back its open windows`, {
      skip: engine.skip,
    }, async () => {
      const target = await freshDatabase(engine.name);
      const database = openDatabase(target.url);
      try {
        await migrateToLatest(database.db);
        await handover(new DatabaseWindowCounters(database.db, database.engine));
      } finally {
        await database.close();
        await target.drop();
      }
    });

  const postgres = engines.find((e) => e.name === 'postgres')!;
  test('database (postgres): hits that wait go together in one statement, exact across instances', {
    skip: postgres.skip,
  }, async () => {
    const target = await freshDatabase('postgres');
    const database = openDatabase(target.url);
    try {
      await migrateToLatest(database.db);
      // Two instances' stores on the one database, their hits of four windows issued together.
      const stores: WindowCounterStore[] = [
        new DatabaseWindowCounters(database.db, 'postgres'),
        new DatabaseWindowCounters(database.db, 'postgres'),
      ];
      const prefix = `batch:${randomBytes(4).toString('hex')}`;
      const keys = ['a', 'b', 'c', 'd'].map((window) => `${prefix}:${window}`);
      const expiresAt = Date.now() + MS.minute;
      const hits = Array.from({ length: 200 }, (_, i) => ({ key: keys[i % 4], store: stores[(i >> 2) % 2] }));
      const counts = await Promise.all(hits.map(({ key, store }) => store.hit(key, expiresAt, Date.now())));
      for (const key of keys) {
        const mine = counts.filter((_, i) => hits[i].key === key).sort((a, b) => a - b);
        assert.deepEqual(
          mine,
          Array.from({ length: 50 }, (_, i) => i + 1),
          `${key}: every hit its own count`,
        );
      }
      // Each store sent its first hit alone and the rest in one statement: every window's row was
      // last written by one of two transactions (one per store), not by one of 200.
      const rows = await sql<{ key: string; count: number; writer: string }>`
        select key, count, xmin::text as writer from counters where key like ${`${prefix}:%`} order by key`.execute(
        database.db,
      );
      assert.deepEqual(
        rows.rows.map((row) => [row.key, Number(row.count)]),
        keys.map((key) => [key, 50]),
      );
      assert.ok(new Set(rows.rows.map((row) => row.writer)).size <= 2, JSON.stringify(rows.rows));
      // A window after a batch starts from what the batch left.
      assert.equal(await stores[0].hit(keys[0], expiresAt, Date.now()), 51);
    } finally {
      await database.close();
      await target.drop();
    }
  });

  test('database (postgres): a statement that fails fails every hit it carried, and the next ones', {
    skip: postgres.skip,
  }, async () => {
    const database = openDatabase(`postgres://postgres@127.0.0.1:${await closedPort()}/absent`);
    try {
      const store: WindowCounterStore = new DatabaseWindowCounters(database.db, 'postgres');
      const expiresAt = Date.now() + MS.minute;
      const results = await Promise.allSettled(
        Array.from({ length: 5 }, (_, i) => store.hit(`down:${i % 2}`, expiresAt, Date.now())),
      );
      assert.deepEqual(
        results.map((result) => result.status),
        ['rejected', 'rejected', 'rejected', 'rejected', 'rejected'],
      );
      await assert.rejects(async () => store.hit('down:later', expiresAt, Date.now()));
    } finally {
      await database.close();
    }
  });

  test('redis: exact under concurrency, and keys expire with their window', { skip: redisSkip }, async () => {
    const prefix = `test-${randomBytes(4).toString('hex')}`;
    const store = new RedisWindowCounters(redisUrl!, prefix);
    const client = new Redis(redisUrl!);
    try {
      await contract(store);
      const keys = await client.keys(`${prefix}:rate:*`);
      assert.equal(keys.length, 2);
      const ttl = await client.pttl(keys[0]);
      assert.ok(ttl > 0 && ttl <= MS.minute, `ttl ${ttl}`);
    } finally {
      await store.close();
      await client.quit();
    }
  });
});

async function sharedLimit(
  config: { redisUrl?: string; redisKeyPrefix?: string },
  engine: 'sqlite' | 'postgres',
) {
  const database = await freshDatabase(engine);
  const first = await startTestApp({ database, limits: { anonymousPerMinute: 10 }, config });
  const second = await startTestApp({ database, limits: { anonymousPerMinute: 10 }, config });
  second.clock.set(first.clock.now());
  try {
    const calls = Array.from({ length: 16 }, (_, i) =>
      (i % 2 ? first : second).call('GET', '/api/agent/setup-check'),
    );
    const statuses = (await Promise.all(calls)).map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 200).length, 10, statuses.join(','));
    assert.equal(statuses.filter((s) => s === 429).length, 6);
    const rows = await first.deps.db
      .selectFrom('counters')
      .select(['key', 'count'])
      .where('key', 'like', 'anonymous:%')
      .execute();
    return { databaseCount: rows.reduce((sum, row) => sum + Number(row.count), 0) };
  } finally {
    await first.close();
    await second.close();
    await database.drop();
  }
}

describe('several instances behave like one', () => {
  const postgres = engines.find((e) => e.name === 'postgres')!;
  test('two instances on one PostgreSQL share the per-minute limit through the database', {
    skip: postgres.skip,
  }, async () => {
    assert.equal((await sharedLimit({}, 'postgres')).databaseCount, 16);
  });
  test('two instances on one PostgreSQL share the per-minute limit through Redis', {
    skip: postgres.skip || redisSkip,
  }, async () => {
    const prefix = `test-${randomBytes(4).toString('hex')}`;
    const counted = await sharedLimit({ redisUrl, redisKeyPrefix: prefix }, 'postgres');
    assert.equal(counted.databaseCount, 0, 'Redis counted them all');
  });
  test('two instances on one PostgreSQL share the per-minute limit through the database while Redis is away', {
    skip: postgres.skip,
  }, async () => {
    const counted = await sharedLimit({ redisUrl: `redis://127.0.0.1:${await closedPort()}` }, 'postgres');
    // Counted in the database's table, the one the instances share without Redis.
    assert.equal(counted.databaseCount, 16);
  });
});

for (const engine of engines) {
  describe(`hourly limits live in the database (${engine.name})`, { skip: engine.skip }, () => {
    const apps: Awaited<ReturnType<typeof startTestApp>>[] = [];
    after(async () => {
      for (const app of apps) await app.close();
    });
    test('a restart does not reset the signup-start limit', async () => {
      const app = await startTestApp({ engine: engine.name, limits: { signupStartPerHour: 2 } });
      apps.push(app);
      const start = () => app.call('POST', '/api/agent/signup/start', { body: { scopes: ['read:public'] } });
      assert.equal((await start()).status, 200);
      assert.equal((await start()).status, 200);
      await app.restart();
      const refused = await start();
      assert.equal(refused.status, 429);
      assert.equal(refused.body.policy, 'signup_start');
      const stored = await app.deps.db.selectFrom('counters').select(['key', 'count']).execute();
      assert.ok(stored.some((row) => row.key.startsWith('signup_start:') && Number(row.count) === 3));
    });
  });
}

for (const engine of engines) {
  describe(`per-minute counts by caller and window (${engine.name})`, { skip: engine.skip }, () => {
    test('callers taking turns are each counted on their own, and a new minute starts a new count', async () => {
      const app = await startTestApp({ engine: engine.name, limits: { tokenPerMinute: 3 } });
      try {
        const member = await app.member('core', 'Turn Taker');
        const first = await app.token(member, ['read:public']);
        const second = await app.token(member, ['read:public']);
        const read = async (token: string) => {
          const answer = await app.call('GET', '/api/agent/setup-check', { token });
          return answer.status === 200 ? Number(answer.headers.get('ratelimit-remaining')) : answer.status;
        };
        // Into a fresh minute, so that the turns below all fall in one window.
        app.clock.advance(MS.minute - (app.clock.now() % MS.minute));
        const turns = [first, second, first, first, second, first];
        const seen = [];
        for (const token of turns) seen.push(await read(token));
        assert.deepEqual(seen, [2, 2, 1, 0, 1, 429]);
        // The same caller as the last turn, a minute on: its count starts again.
        app.clock.advance(MS.minute);
        assert.deepEqual([await read(first), await read(first), await read(second)], [2, 1, 2]);
      } finally {
        await app.close();
      }
    });
  });
}
