// /healthz is liveness, /readyz readiness: the database answers, every migration
// the code declares has run, the instance is not draining; the answer says which, in words too.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { startDraining } from '../src/surfaces/health.ts';
import { startTestApp } from './support/app.ts';
import { engines } from './support/databases.ts';

describe('readiness', { concurrency: true }, () => {
  for (const engine of engines) {
    test(`database, migrations and draining, in JSON and in words (${engine.name})`, {
      skip: engine.skip,
    }, async () => {
      const t = await startTestApp({ engine: engine.name });
      try {
        // A migration the code declares but the database has not recorded: not ready, and which.
        const latest = await sql<{ name: string; timestamp: string }>`
          select name, timestamp from kysely_migration order by name desc limit 1`.execute(t.deps.db);
        const { name, timestamp } = latest.rows[0];
        await sql`delete from kysely_migration where name = ${name}`.execute(t.deps.db);
        const pending = await t.call('GET', '/readyz');
        assert.equal(pending.status, 503);
        assert.equal(pending.body.error, 'service_unavailable');
        assert.deepEqual(pending.body.checks, { database: 'up', migrations: 'down' });
        assert.ok(pending.body.detail.includes(`migrations: down (not applied: ${name})`), pending.text);
        assert.equal(pending.headers.get('cache-control'), 'no-store');
        await sql`insert into kysely_migration (name, timestamp) values (${name}, ${timestamp})`.execute(
          t.deps.db,
        );

        // PostgreSQL's instance also says that its lookup cache serves (its change listener is up).
        const listening = engine.name === 'postgres';
        const cacheLine = listening ? ['lookup cache: on (change listener connected)'] : [];
        const ready = await t.call('GET', '/readyz');
        assert.equal(ready.status, 200);
        assert.deepEqual(ready.body, {
          ok: true,
          checks: { database: 'up', migrations: 'up' },
          draining: false,
          ...(listening ? { lookup_cache: 'on' } : {}),
          detail: [
            'ready',
            `database: up (${engine.name})`,
            'migrations: up (all applied)',
            'draining: no',
            ...cacheLine,
          ],
        });
        const words = await t.call('GET', '/readyz', { headers: { accept: 'text/plain' } });
        assert.equal(words.status, 200);
        assert.match(words.headers.get('content-type') ?? '', /^text\/plain/);
        assert.equal(
          words.text,
          `${['ready', `database: up (${engine.name})`, 'migrations: up (all applied)', 'draining: no', ...cacheLine].join('\n')}\n`,
        );

        // SIGTERM's first step: readiness goes, liveness stays.
        startDraining(t.app);
        const draining = await t.call('GET', '/readyz');
        assert.equal(draining.status, 503);
        assert.equal(draining.body.draining, true);
        assert.deepEqual(draining.body.checks, { database: 'up', migrations: 'up' });
        assert.equal(draining.body.detail[0], 'not ready');
        assert.ok(
          draining.body.detail.includes('draining: yes (SIGTERM received; finishing requests in flight)'),
        );
        assert.ok(Number(draining.headers.get('retry-after')) > 0);
        const live = await t.call('GET', '/healthz');
        assert.equal(live.status, 200);
        assert.deepEqual(live.body, { ok: true });
      } finally {
        await t.close();
      }
    });
  }
});
