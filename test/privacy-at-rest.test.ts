import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/storage/database.ts';
import { privacy } from '../src/storage/migrations/0015-privacy.ts';
import { migrateToLatest } from '../src/storage/migrations.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines, freshDatabase } from './support/databases.ts';

const SECRET = 'a-secret-only-the-environment-holds-0123456789';
const FEEDBACK = { message: 'The events page lists a meetup twice; I expected it once.' };

const addressHash = (secret: string, ip: string) =>
  createHmac('sha256', secret).update(`feedback-ip:${ip}`).digest('base64url');

for (const engine of engines) {
  describe(`the feedback address key lives outside the database (${engine.name})`, {
    skip: engine.skip,
  }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine: engine.name, config: { ipHashSecret: SECRET } });
    });
    after(() => t?.close());

    const file = async () => {
      const response = await t.call('POST', '/api/agent/feedback', { body: FEEDBACK });
      assert.equal(response.status, 201, response.text);
      return t.deps.db
        .selectFrom('feedback')
        .select('ip_hash')
        .where('ticket_id', '=', response.body.ticket_id)
        .executeTakeFirstOrThrow();
    };

    test('tickets are keyed with IP_HASH_SECRET, and nothing of the key is stored', async () => {
      const first = await file();
      assert.equal(first.ip_hash, addressHash(SECRET, '127.0.0.1'));
      const settings = await t.deps.db.selectFrom('settings').selectAll().execute();
      assert.ok(!settings.some((row) => row.key === 'ip_salt'), 'no salt among the settings');
      assert.ok(!JSON.stringify(settings).includes(SECRET));
      await t.restart();
      assert.equal(
        (await file()).ip_hash,
        first.ip_hash,
        'another instance with the same secret groups alike',
      );
    });
  });

  describe(`upgrading drops what was kept before (${engine.name})`, { skip: engine.skip }, () => {
    test('the stored salt, ended grants’ requesters and research task answers are removed', async () => {
      const target = await freshDatabase(engine.name);
      const database = openDatabase(target.url);
      try {
        await migrateToLatest(database.db);
        const { db } = database;
        // The rows an older version left behind.
        await db.insertInto('settings').values({ key: 'ip_salt', value: 'deadbeef' }).execute();
        const grant = (id: string, status: string) => ({
          id,
          device_code_hash: `d-${id}`,
          user_code_hash: `u-${id}`,
          scopes: '[]',
          client_name: null,
          sandbox: 0,
          status,
          created_at: 0,
          expires_at: 1,
          interval_s: 5,
          last_poll_at: null,
          member_id: null,
          granted_scopes: null,
          denied_scopes: null,
          decided_at: null,
          reason: null,
          token_id: null,
          ip: '198.51.100.7',
          user_agent: 'old-agent/1',
          bound_session_hash: null,
        });
        await db
          .insertInto('device_grants')
          .values([grant('grt_ended', 'consumed'), grant('grt_running', 'pending')])
          .execute();
        const member = {
          id: 'mem_old',
          email: 'old@example.org',
          name: 'Old',
          handle: 'old',
          tier: 'member',
        };
        await db
          .insertInto('members')
          .values({ ...member, created_at: 0, updated_at: 0 })
          .execute();
        const task = (id: string, capability: string, result: unknown) => ({
          id,
          member_id: member.id,
          context_id: 'ctx',
          capability,
          state: 'completed',
          result: JSON.stringify(result),
          created_at: 0,
          updated_at: 0,
          expires_at: Number.MAX_SAFE_INTEGER,
        });
        await db
          .insertInto('a2a_tasks')
          .values([
            task('t_research', 'ic_research_ask', { q: 'what the member asked' }),
            task('t_health', 'ic_health', { ok: true }),
          ])
          .execute();
        // The privacy migration once more, on what a database made before it held (the migrations
        // after it have run, so it is run by itself rather than through the migrator).
        await privacy.up(db);

        assert.equal(
          await db.selectFrom('settings').select('key').where('key', '=', 'ip_salt').executeTakeFirst(),
          undefined,
        );
        const grants = await db
          .selectFrom('device_grants')
          .select(['id', 'ip', 'user_agent'])
          .orderBy('id')
          .execute();
        assert.deepEqual(grants, [
          { id: 'grt_ended', ip: null, user_agent: null },
          { id: 'grt_running', ip: '198.51.100.7', user_agent: 'old-agent/1' },
        ]);
        const tasks = await db.selectFrom('a2a_tasks').select(['id', 'result']).orderBy('id').execute();
        assert.deepEqual(tasks, [
          { id: 't_health', result: '{"ok":true}' },
          { id: 't_research', result: 'null' },
        ]);
      } finally {
        await database.close();
        await target.drop();
      }
    });
  });
}

test('IP_HASH_SECRET: shorter than 32 characters is refused at start, without printing it', () => {
  assert.throws(
    () => loadConfig({ IP_HASH_SECRET: 'short-secret' }),
    (error: Error) => {
      assert.equal(error.message, 'IP_HASH_SECRET must be at least 32 characters');
      return true;
    },
  );
  assert.equal(loadConfig({ IP_HASH_SECRET: `  ${SECRET}  ` }).ipHashSecret, SECRET);
  assert.equal(loadConfig({}).ipHashSecret, undefined);
});
