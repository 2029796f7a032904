import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MS } from '../src/clock.ts';
import { approveGrant, denyGrant } from '../src/domain/auth/device-grants.ts';
import { sha256 } from '../src/secrets.ts';
import { startScheduler } from '../src/workers/scheduler.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';
import { waitUntil } from './support/wait.ts';

const AGENT_SOFTWARE = 'retention-probe/1.0';

for (const engine of engines) {
  describe(`a device grant forgets its requester when it ends (${engine.name})`, {
    skip: engine.skip,
  }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine: engine.name });
    });
    after(() => t?.close());

    async function start() {
      const response = await t.call('POST', '/api/agent/signup/start', {
        body: { scopes: ['read:public'], client_name: 'probe' },
        headers: { 'user-agent': AGENT_SOFTWARE },
      });
      assert.equal(response.status, 200, response.text);
      return response.body as { device_code: string; user_code: string };
    }
    const poll = (code: string) =>
      t.call('GET', `/api/agent/signup/poll?device_code=${encodeURIComponent(code)}`);
    const row = (deviceCode: string) =>
      t.deps.db
        .selectFrom('device_grants')
        .select(['status', 'ip', 'user_agent'])
        .where('device_code_hash', '=', sha256(deviceCode))
        .executeTakeFirstOrThrow();
    const requesterGone = { ip: null, user_agent: null };

    test('pending: the approving member is shown where the request came from', async () => {
      const grant = await start();
      const pending = await row(grant.device_code);
      assert.equal(pending.status, 'pending');
      assert.equal(pending.ip, '127.0.0.1');
      assert.equal(pending.user_agent, AGENT_SOFTWARE);
    });

    test('approved, then delivered: the address and software are gone from the decision on', async () => {
      const grant = await start();
      const member = await t.member('member');
      assert.equal((await approveGrant(t.deps, grant.user_code, member.id)).ok, true);
      assert.deepEqual(await row(grant.device_code), { status: 'approved', ...requesterGone });
      assert.equal((await poll(grant.device_code)).body.status, 'completed');
      assert.deepEqual(await row(grant.device_code), { status: 'consumed', ...requesterGone });
    });

    test('denied: gone at the denial', async () => {
      const grant = await start();
      const member = await t.member('member');
      assert.equal((await denyGrant(t.deps, grant.user_code, member.id)).ok, true);
      assert.deepEqual(await row(grant.device_code), { status: 'denied', ...requesterGone });
      assert.equal((await poll(grant.device_code)).body.status, 'cancelled');
      assert.deepEqual(await row(grant.device_code), { status: 'cancelled', ...requesterGone });
    });

    test('expired and polled: gone with the expiry', async () => {
      const grant = await start();
      t.clock.advance(900 * MS.second);
      assert.equal((await poll(grant.device_code)).body.error, 'expired_token');
      assert.deepEqual(await row(grant.device_code), { status: 'expired', ...requesterGone });
    });

    test('expired and never polled again: the scheduler’s sweep ends it', async () => {
      const abandoned = await start();
      t.clock.advance(900 * MS.second);
      const live = await start();
      const lines: string[] = [];
      const log = {
        info: () => {},
        warn: (_details: Record<string, unknown>, message: string) => lines.push(message),
      };
      // Every job runs its first pass at once.
      const stop = startScheduler(t.deps, log, { workers: false });
      try {
        await waitUntil(
          async () => (await row(abandoned.device_code)).status === 'expired',
          'the sweep’s first pass',
        );
      } finally {
        await stop();
      }
      assert.deepEqual(await row(abandoned.device_code), { status: 'expired', ...requesterGone });
      const untouched = await row(live.device_code);
      assert.equal(untouched.status, 'pending', 'a grant still running is left alone');
      assert.equal(untouched.user_agent, AGENT_SOFTWARE);
      assert.equal((await poll(abandoned.device_code)).body.error, 'expired_token');
    });
  });
}
