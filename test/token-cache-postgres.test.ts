// PostgreSQL instances keep valid token, session and tier-status lookups in memory too, emptied by
// the notification the tables' triggers send on every commit (src/storage/engine/auth-listener.ts). Two
// instances on one database: a change made through one, or by SQL from outside, is refused by the
// other within the notification's delivery; while the listener is down nothing is served from memory.
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { createSession, SESSION_COOKIE } from '../src/domain/auth/sessions.ts';
import { sha256 } from '../src/secrets.ts';
import { AUTH_LISTENER_NAME } from '../src/storage/engine/auth-listener.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines, postgresUrl } from './support/databases.ts';
import { waitUntil } from './support/wait.ts';

const postgres = engines.find((engine) => engine.name === 'postgres')!;
/** Generous for a loaded CI machine; the measured figure is printed with each test. */
const BOUND_MS = 1000;

describe('lookup cache across instances (postgres)', { skip: postgres.skip }, () => {
  let a: TestApp;
  let b: TestApp;
  let sqlClient: pg.Client;
  before(async () => {
    a = await startTestApp({ engine: 'postgres' });
    b = await startTestApp({ engine: 'postgres', database: a.database });
    sqlClient = new pg.Client({ connectionString: a.database.url });
    await sqlClient.connect();
  });
  after(async () => {
    await sqlClient?.end();
    await b?.close();
    await a?.close();
  });

  const check = (on: TestApp, token: string) => on.call('GET', '/api/ingest/highlights/pending', { token });
  let stories = 0;
  const submit = (on: TestApp, token: string, id = `pg-cache-${++stories}`) =>
    on.call('POST', '/api/ingest/highlights/pending', { token, body: { id } });

  /**
   * Returns once the setup's own notifications (a new member) have reached both instances, so none
   * empties a cache after the test has filled it. Notifications reach a listener in commit order: a
   * probe entry is put in each cache, one more is sent (a statement trigger fires on an update of no
   * rows), and once both probes are gone every earlier notification has arrived. A fixed pause
   * instead would be too short on a loaded machine.
   */
  async function settled(): Promise<void> {
    const caches = [a, b].map((on) => on.deps.database.authCache!);
    for (const cache of caches) cache.set('settled-probe', {}, cache.snapshot());
    assert.ok(
      caches.every((cache) => cache.get('settled-probe')),
      'both caches hold the probe',
    );
    await sqlClient.query('update members set tier = tier where false');
    await waitUntil(
      () => caches.every((cache) => cache.get('settled-probe') === undefined),
      "the setup's notifications to reach both instances",
    );
  }

  /** Asks `on` until `refused` says so; the time from the start until then, in ms. */
  async function untilRefused(ask: () => Promise<boolean>): Promise<number> {
    const started = performance.now();
    while (performance.now() - started < 5000) {
      if (await ask()) return performance.now() - started;
      await new Promise((resolve) => setImmediate(resolve));
    }
    assert.fail('still served 5 s after the change');
  }

  test('a revocation through one instance is refused by the other within the notification', async (t) => {
    const member = await a.member('core');
    const token = await a.token(member, ['events:submit_recap']);
    await settled();
    assert.equal((await check(b, token)).status, 200);
    assert.ok(b.deps.database.authCache?.get(sha256(token)), 'instance b holds the lookup');
    const revoked = await a.call('POST', '/api/agent/token/revoke', { token });
    assert.equal(revoked.status, 200);
    assert.equal(revoked.body.revoked, true);
    const ms = await untilRefused(async () => {
      const answer = await check(b, token);
      if (answer.status === 200) return false;
      assert.equal(answer.status, 401);
      assert.equal(answer.body.error, 'token_revoked');
      return true;
    });
    t.diagnostic(`refused by the other instance ${ms.toFixed(1)} ms after the revocation's answer`);
    assert.ok(ms < BOUND_MS, `${ms} ms`);
    const stored = await sqlClient.query('select revoked_at from tokens where hash = $1', [sha256(token)]);
    assert.ok(Number(stored.rows[0].revoked_at) > 0);
  });

  test("an operator's SQL demotion reaches both instances' caches", async (t) => {
    const member = await a.member('core');
    const token = await a.token(member, ['events:submit_recap']);
    await settled();
    // One story through each instance. Until the demotion reaches an instance, its polls resubmit
    // that story, which refreshes it without spending the daily quota (three new stories a day): a
    // slow notification must not turn the poll into a 429.
    const storyOf = new Map<TestApp, string>();
    for (const on of [a, b]) {
      storyOf.set(on, `pg-cache-${++stories}`);
      assert.equal((await submit(on, token, storyOf.get(on))).status, 202);
    }
    for (const on of [a, b]) assert.ok(on.deps.database.authCache?.get(sha256(token)));
    await sqlClient.query(`update members set tier = 'member' where id = $1`, [member.id]);
    for (const on of [a, b]) {
      const ms = await untilRefused(async () => {
        const answer = await submit(on, token, storyOf.get(on));
        if (answer.status === 202) return false;
        assert.equal(answer.status, 403);
        assert.equal(answer.body.error_kind, 'tier');
        return true;
      });
      t.diagnostic(`refused ${ms.toFixed(1)} ms after the commit`);
      assert.ok(ms < BOUND_MS, `${ms} ms`);
    }
  });

  test('a session signed out on one instance ends on the other', async () => {
    const member = await a.member('resident');
    const session = await createSession(a.deps.db, a.clock, member.id);
    await settled();
    const tierMe = (on: TestApp) =>
      on.call('GET', '/api/tier/me', { headers: { cookie: `${SESSION_COOKIE}=${session}` } });
    assert.equal((await tierMe(b)).status, 200);
    assert.ok(b.deps.database.authCache?.get(`session:${sha256(session)}`), 'instance b holds the session');
    await sqlClient.query('update sessions set revoked_at = $1 where id_hash = $2', [
      Date.now(),
      sha256(session),
    ]);
    await untilRefused(async () => (await tierMe(b)).status === 401);
  });

  test("a token's last-use stamp, the request path's own write, leaves the caches alone", async () => {
    const member = await a.member('core');
    const token = await a.token(member, ['events:submit_recap']);
    await settled();
    assert.equal((await check(b, token)).status, 200);
    await sqlClient.query('update tokens set last_used_at = $1 where hash = $2', [Date.now(), sha256(token)]);
    // A notification, had one been sent, arrives within milliseconds.
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.ok(b.deps.database.authCache?.get(sha256(token)), 'still held');
    await sqlClient.query('update tokens set name = $1 where hash = $2', ['renamed', sha256(token)]);
    await untilRefused(async () => b.deps.database.authCache?.get(sha256(token)) === undefined);
  });

  test('while the listener is down nothing is served from memory, and caching resumes once it is back', async () => {
    const member = await a.member('core');
    const token = await a.token(member, ['events:submit_recap']);
    await settled();
    assert.equal((await check(b, token)).status, 200);
    const cache = b.deps.database.authCache!;
    assert.equal(cache.active, true);
    // The outage lasts until the test ends it: the database refuses new connections, so a listener
    // cannot come back between two of the test's steps however slow the machine (it retries from
    // 100 ms after it dropped). Connections already open stay; b's pool opens a few first, so the
    // requests below do not need a new one.
    await Promise.all(Array.from({ length: 4 }, () => b.call('GET', '/readyz')));
    const databaseName = new URL(a.database.url).pathname.slice(1);
    const admin = new pg.Client({ connectionString: postgresUrl });
    await admin.connect();
    const allowConnections = (allow: boolean) =>
      admin.query(`alter database "${databaseName}" with allow_connections ${allow}`);
    try {
      await allowConnections(false);
      // Ends every listener on the database (both instances'): each notices at once and suspends.
      const ended = await sqlClient.query(
        'select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and application_name = $1',
        [AUTH_LISTENER_NAME],
      );
      assert.equal(ended.rowCount, 2, 'one listener per instance');
      await waitUntil(() => !cache.active && !a.deps.database.authCache!.active, 'both caches to suspend');
      // Readiness says so, and stays 200: without the cache the instance is as exact, only slower.
      const down = await b.call('GET', '/readyz');
      assert.equal(down.status, 200);
      assert.equal(down.body.lookup_cache, 'off', down.text);
      assert.deepEqual(down.body.checks, { database: 'up', migrations: 'up' });
      assert.ok(
        down.body.detail.includes(
          'lookup cache: off (change listener down: every lookup reads the database, exact but slower)',
        ),
        down.text,
      );
      assert.equal(cache.get(sha256(token)), undefined, 'nothing answered from memory while suspended');
      // A revocation now is not notified to anyone listening, yet the next request reads it.
      await sqlClient.query('update tokens set revoked_at = $1 where hash = $2', [Date.now(), sha256(token)]);
      const refused = await check(b, token);
      assert.equal(refused.status, 401);
      assert.equal(refused.body.error, 'token_revoked');
      assert.equal(cache.active, false, 'still suspended: the refusal came from the database');
    } finally {
      await allowConnections(true);
      await admin.end();
    }
    await waitUntil(() => cache.active && a.deps.database.authCache!.active, 'both listeners to be back');
    const back = await b.call('GET', '/readyz');
    assert.equal(back.body.lookup_cache, 'on');
    assert.ok(back.body.detail.includes('lookup cache: on (change listener connected)'), back.text);
    const listening = await sqlClient.query(
      'select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name = $1',
      [AUTH_LISTENER_NAME],
    );
    assert.equal(listening.rows[0].n, 2, 'both listeners reconnected');
    const other = await a.token(member, ['events:submit_recap']);
    assert.equal((await check(b, other)).status, 200);
    assert.ok(cache.get(sha256(other)), 'cached again');
  });
});
