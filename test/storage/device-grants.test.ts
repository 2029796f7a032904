// The device-grants repository's contract: the same calls give the same rows on both engines.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { deviceGrants } from '../../src/storage/device-grants.ts';
import type { DeviceGrantsTable } from '../../src/storage/schema.ts';
import { engines } from '../support/databases.ts';
import { storageUnderTest } from '../support/storage.ts';

for (const engine of engines) {
  describe(`device grants repository (${engine.name})`, { skip: engine.skip }, () => {
    const storage = storageUnderTest(engine.name);
    const grant = (id: string, expiresAt: number): DeviceGrantsTable => ({
      id,
      device_code_hash: `device-${id}`,
      user_code_hash: `user-${id}`,
      scopes: '["highlights:read"]',
      client_name: null,
      sandbox: 0,
      status: 'pending',
      created_at: 0,
      expires_at: expiresAt,
      interval_s: 5,
      last_poll_at: null,
      member_id: null,
      granted_scopes: null,
      denied_scopes: null,
      decided_at: null,
      reason: null,
      token_id: null,
      ip: '192.0.2.1',
      user_agent: 'agent/1',
      bound_session_hash: null,
    });
    const byId = async (id: string) => (await deviceGrants.byDeviceCode(storage.db, `device-${id}`))!;

    test('a grant inserted is found by either code; an unknown code is undefined', async () => {
      await deviceGrants.insert(storage.db, grant('grt_a', 100));
      assert.deepEqual(await deviceGrants.byDeviceCode(storage.db, 'device-grt_a'), grant('grt_a', 100));
      assert.deepEqual(await deviceGrants.byUserCode(storage.db, 'user-grt_a'), grant('grt_a', 100));
      assert.equal(await deviceGrants.byDeviceCode(storage.db, 'device-none'), undefined);
      assert.equal(await deviceGrants.byUserCode(storage.db, 'user-none'), undefined);
    });

    test('polls and the interval are recorded', async () => {
      await deviceGrants.setLastPoll(storage.db, 'grt_a', 40);
      await deviceGrants.setInterval(storage.db, 'grt_a', 10);
      const row = await byId('grt_a');
      assert.deepEqual([row.last_poll_at, row.interval_s], [40, 10]);
    });

    test('bindSession keeps the sign-in it was bound to first and answers it', async () => {
      assert.equal(await deviceGrants.bindSession(storage.db, 'grt_a', 'ses-1'), 'ses-1');
      assert.equal(await deviceGrants.bindSession(storage.db, 'grt_a', 'ses-2'), 'ses-1');
    });

    test('decide writes once, from the status named, and drops the requester', async () => {
      const ada = await storage.member('Ada');
      const decision = {
        status: 'approved',
        memberId: ada,
        grantedScopes: '["highlights:read"]',
        deniedScopes: '[]',
        decidedAt: 50,
        reason: null,
      };
      assert.equal(await deviceGrants.decide(storage.db, 'grt_a', 'pending', decision), true);
      assert.equal(await deviceGrants.decide(storage.db, 'grt_a', 'pending', decision), false);
      const row = await byId('grt_a');
      assert.deepEqual(
        [row.status, row.member_id, row.granted_scopes, row.denied_scopes, row.decided_at, row.reason],
        ['approved', ada, '["highlights:read"]', '[]', 50, null],
      );
      assert.deepEqual([row.ip, row.user_agent], [null, null]);
    });

    test('end moves a grant from one status to another once, dropping the requester', async () => {
      await deviceGrants.insert(storage.db, grant('grt_b', 100));
      assert.equal(await deviceGrants.end(storage.db, 'grt_b', 'approved', 'consumed'), false);
      assert.equal(await deviceGrants.end(storage.db, 'grt_b', 'pending', 'expired'), true);
      assert.equal(await deviceGrants.end(storage.db, 'grt_b', 'pending', 'expired'), false);
      const row = await byId('grt_b');
      assert.deepEqual([row.status, row.ip, row.user_agent], ['expired', null, null]);
      await deviceGrants.setToken(storage.db, 'grt_a', 'tok_1');
      assert.equal((await byId('grt_a')).token_id, 'tok_1');
    });

    test('endExpired moves the grants whose code ended by now; deleteExpiredWithUserCode only an expired one', async () => {
      await deviceGrants.insert(storage.db, grant('grt_c', 200));
      await deviceGrants.insert(storage.db, grant('grt_d', 300));
      assert.equal(await deviceGrants.endExpired(storage.db, 'pending', 'expired', 200), 1);
      assert.equal((await byId('grt_c')).status, 'expired');
      assert.equal((await byId('grt_d')).status, 'pending');
      await deviceGrants.deleteExpiredWithUserCode(storage.db, 'user-grt_d', 300);
      assert.ok(await deviceGrants.byUserCode(storage.db, 'user-grt_d'));
      await deviceGrants.deleteExpiredWithUserCode(storage.db, 'user-grt_d', 301);
      assert.equal(await deviceGrants.byUserCode(storage.db, 'user-grt_d'), undefined);
    });
  });
}
