import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MS } from '../src/clock.ts';
import { approveGrant, denyGrant } from '../src/domain/auth/device-grants.ts';
import { sha256 } from '../src/secrets.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';

for (const engine of engines) {
  describe(`device-code grant (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine: engine.name });
    });
    after(() => t?.close());

    async function start(
      body: unknown = { scopes: ['read:public', 'events:rsvp', 'resources:book'], client_name: 'cal' },
    ) {
      const response = await t.call('POST', '/api/agent/signup/start', { body });
      assert.equal(response.status, 200, response.text);
      return response.body as { device_code: string; user_code: string; verify_url_complete: string };
    }
    const poll = (code: string) =>
      t.call('GET', `/api/agent/signup/poll?device_code=${encodeURIComponent(code)}`);

    test('start → approve → poll delivers the token once, then 410', async () => {
      const member = await t.member('member');
      const grant = await start();
      assert.match(grant.user_code, /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
      assert.equal(grant.verify_url_complete, `${t.baseUrl}/signup-with-agent?code=${grant.user_code}`);
      const stored = await t.deps.db.selectFrom('device_grants').selectAll().executeTakeFirstOrThrow();
      assert.equal(stored.device_code_hash, sha256(grant.device_code), 'the device code is stored hashed');
      assert.ok(
        !JSON.stringify(stored).includes(grant.device_code),
        'the plaintext device code is not stored',
      );

      const pending = await poll(grant.device_code);
      assert.equal(pending.status, 200);
      assert.equal(pending.body.status, 'pending');
      assert.equal(pending.body.interval, 5);

      const decision = await approveGrant(t.deps, grant.user_code.toLowerCase().replace('-', ' '), member.id);
      assert.equal(decision.ok, true);
      t.clock.advance(5 * MS.second);
      const completed = await poll(grant.device_code);
      assert.equal(completed.status, 200);
      assert.equal(completed.headers.get('cache-control'), 'no-store');
      assert.equal(completed.body.status, 'completed');
      assert.match(completed.body.agent_token, /^agt_[A-Za-z0-9_-]{43}$/);
      assert.deepEqual(completed.body.granted_scopes, ['read:public', 'events:rsvp']);
      assert.deepEqual(completed.body.denied_scopes, ['resources:book']);
      assert.equal(completed.body.tier, 'member');
      assert.equal(completed.body.member_id, member.id);
      assert.equal(completed.body.sandbox, false);

      const token = await t.deps.db
        .selectFrom('tokens')
        .selectAll()
        .where('hash', '=', sha256(completed.body.agent_token))
        .executeTakeFirstOrThrow();
      assert.equal(token.member_id, member.id);
      assert.equal(token.source, 'device');
      assert.deepEqual(JSON.parse(token.scopes), ['read:public', 'events:rsvp']);

      const check = await t.call('GET', '/api/agent/setup-check', { token: completed.body.agent_token });
      assert.equal(check.body.ready, true);

      const again = await poll(grant.device_code);
      assert.equal(again.status, 410);
      assert.equal(again.body.error, 'already_delivered');
      assert.equal(again.body.error_kind, 'gone');
    });

    test('ten concurrent polls of an approved grant deliver the token exactly once', async () => {
      const member = await t.member('core');
      const grant = await start();
      assert.equal((await approveGrant(t.deps, grant.user_code, member.id)).ok, true);
      const results = await Promise.all(Array.from({ length: 10 }, () => poll(grant.device_code)));
      const delivered = results.filter((r) => r.status === 200);
      assert.equal(delivered.length, 1, results.map((r) => r.status).join(','));
      assert.equal(delivered[0].body.status, 'completed');
      assert.ok(results.filter((r) => r.status !== 200).every((r) => r.status === 410));
      const tokens = await t.deps.db
        .selectFrom('tokens')
        .select('id')
        .where('member_id', '=', member.id)
        .execute();
      assert.equal(tokens.length, 1, 'one token minted');
    });

    test('polling faster than the interval gets slow_down; the first poll is never throttled', async () => {
      const grant = await start();
      assert.equal((await poll(grant.device_code)).status, 200);
      t.clock.advance(1 * MS.second);
      const fast = await poll(grant.device_code);
      assert.equal(fast.status, 429);
      assert.equal(fast.body.error, 'slow_down');
      assert.equal(fast.body.interval, 10);
      assert.equal(fast.headers.get('retry-after'), '10');
      t.clock.advance(5 * MS.second);
      const patient = await poll(grant.device_code);
      assert.equal(patient.status, 200);
      assert.equal(patient.body.interval, 10);
    });

    test('a grant expires after 900 s: 410, and approval is refused', async () => {
      const member = await t.member('member');
      const grant = await start();
      t.clock.advance(900 * MS.second);
      const expired = await poll(grant.device_code);
      assert.equal(expired.status, 410);
      assert.equal(expired.body.error, 'expired_token');
      assert.deepEqual(await approveGrant(t.deps, grant.user_code, member.id), {
        ok: false,
        reason: 'decided',
      });
      const row = await t.deps.db
        .selectFrom('device_grants')
        .select('status')
        .where('device_code_hash', '=', sha256(grant.device_code))
        .executeTakeFirstOrThrow();
      assert.equal(row.status, 'expired');
    });

    test('a denial is reported once as cancelled, then 410', async () => {
      const member = await t.member('member');
      const grant = await start();
      assert.equal((await denyGrant(t.deps, grant.user_code, member.id, 'not mine')).ok, true);
      const cancelled = await poll(grant.device_code);
      assert.equal(cancelled.status, 200);
      assert.deepEqual(cancelled.body, { status: 'cancelled', reason: 'not mine' });
      const gone = await poll(grant.device_code);
      assert.equal(gone.status, 410);
      // RFC 8628's code for a declined grant, not the delivered one's.
      assert.equal(gone.body.error, 'access_denied');
      assert.equal(gone.body.message, 'The member declined this grant; start a new grant.');
      const row = await t.deps.db
        .selectFrom('device_grants')
        .select('status')
        .where('device_code_hash', '=', sha256(grant.device_code))
        .executeTakeFirstOrThrow();
      assert.equal(row.status, 'cancelled');
      const tokens = await t.deps.db
        .selectFrom('tokens')
        .select('id')
        .where('member_id', '=', member.id)
        .execute();
      assert.equal(tokens.length, 0);
    });

    test('start refuses missing, empty and unknown scopes with a usable example', async () => {
      for (const body of [{}, { scopes: [] }]) {
        const response = await t.call('POST', '/api/agent/signup/start', { body });
        assert.equal(response.status, 400);
        assert.equal(response.body.error, 'missing_scopes');
        const retry = await t.call('POST', '/api/agent/signup/start', { body: response.body.example });
        assert.equal(retry.status, 200, 'the example body works as is');
      }
      const unknown = await t.call('POST', '/api/agent/signup/start', {
        body: { scopes: ['read:public', 'root'] },
      });
      assert.equal(unknown.status, 400);
      assert.deepEqual(unknown.body.unknown_scopes, ['root']);
      const tooLong = await t.call('POST', '/api/agent/signup/start', {
        body: { scopes: ['read:public'], client_name: 'x'.repeat(81) },
      });
      assert.equal(tooLong.status, 400);
      assert.equal(tooLong.body.field, 'client_name');
    });

    test('poll without device_code describes the flow; bad and unknown codes are 4xx', async () => {
      const describe = await t.call('GET', '/api/agent/signup/poll');
      assert.equal(describe.status, 200);
      assert.match(describe.body.start.url, /\/api\/agent\/signup\/start$/);
      assert.equal((await poll('short')).status, 400);
      const unknown = await poll('x'.repeat(43));
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.error, 'unknown_device_code');
    });

    test('the standard RFC 8628 endpoints share the grant', async () => {
      const member = await t.member('member');
      const form = (fields: Record<string, string>) => ({
        rawBody: new URLSearchParams(fields).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      const started = await t.call(
        'POST',
        '/oauth/device_authorization',
        form({ scope: 'read:public events:rsvp', client_id: 'cli' }),
      );
      assert.equal(started.status, 200, started.text);
      assert.ok(started.body.verification_uri_complete.includes(started.body.user_code));
      const grant = {
        grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
        device_code: started.body.device_code,
      };
      const pending = await t.call('POST', '/oauth/token', form(grant));
      assert.equal(pending.status, 400);
      assert.equal(pending.body.error, 'authorization_pending');
      await approveGrant(t.deps, started.body.user_code, member.id);
      t.clock.advance(5 * MS.second);
      const done = await t.call('POST', '/oauth/token', form(grant));
      assert.equal(done.status, 200, done.text);
      assert.equal(done.body.token_type, 'Bearer');
      assert.equal(done.body.scope, 'read:public events:rsvp');
      const check = await t.call('GET', '/api/agent/setup-check', { token: done.body.access_token });
      assert.equal(check.body.ready, true);
      assert.equal((await t.call('POST', '/oauth/token', form(grant))).body.error, 'invalid_grant');
    });

    test('signup start allows 30 per IP per hour', async () => {
      const fresh = await startTestApp({ engine: engine.name });
      try {
        for (let i = 0; i < 30; i++) {
          assert.equal(
            (await fresh.call('POST', '/api/agent/signup/start', { body: { scopes: ['read:public'] } }))
              .status,
            200,
          );
        }
        const refused = await fresh.call('POST', '/api/agent/signup/start', {
          body: { scopes: ['read:public'] },
        });
        assert.equal(refused.status, 429);
        assert.equal(refused.body.error_kind, 'rate_limit');
        assert.ok(Number(refused.headers.get('retry-after')) > 0);
        assert.deepEqual(refused.body.rate, { current: 30, remaining: 0, limit: 30 });
        const rows = await fresh.deps.db.selectFrom('device_grants').select('id').execute();
        assert.equal(rows.length, 30, 'the refused start stored nothing');
        fresh.clock.advance(MS.hour);
        assert.equal(
          (await fresh.call('POST', '/api/agent/signup/start', { body: { scopes: ['read:public'] } })).status,
          200,
        );
      } finally {
        await fresh.close();
      }
    });
  });
}
