import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setMemberTier } from '../src/domain/members/members.ts';
import { sha256 } from '../src/secrets.ts';
import { openDatabase } from '../src/storage/database.ts';
import { EXTERNAL_CHECK_MS } from '../src/storage/invalidating-cache.ts';
import { startTestApp, type TestApp } from './support/app.ts';

// The embedded engine keeps valid token lookups in memory; these tests show a change still takes
// effect on the very next request when this process makes it, and within 250 ms when another does.
describe('token lookup cache (sqlite)', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ engine: 'sqlite' });
  });
  after(() => t?.close());

  const check = (token: string) => t.call('GET', '/api/ingest/highlights/pending', { token });

  test('a valid lookup is cached, and a revocation through the API ends it at once', async () => {
    const member = await t.member('core');
    const token = await t.token(member, ['events:submit_recap']);
    assert.equal((await check(token)).status, 200);
    assert.ok(t.deps.database.authCache?.get(sha256(token)), 'the lookup is cached');
    assert.equal((await t.call('POST', '/api/agent/token/revoke', { token })).status, 200);
    assert.equal(t.deps.database.authCache?.get(sha256(token)), undefined);
    const refused = await check(token);
    assert.equal(refused.status, 401);
    assert.equal(refused.body.error, 'token_revoked');
  });

  test('a demotion by another connection (the CLI, another process) takes effect within 250 ms', async () => {
    const member = await t.member('core');
    const token = await t.token(member, ['events:submit_recap']);
    const submit = () =>
      t.call('POST', '/api/ingest/highlights/pending', { token, body: { id: `cache-${Date.now()}` } });
    assert.equal((await submit()).status, 202);
    assert.ok(t.deps.database.authCache?.get(sha256(token)));
    const other = openDatabase(t.database.url);
    try {
      await other.db.updateTable('members').set({ tier: 'member' }).where('id', '=', member.id).execute();
    } finally {
      await other.close();
    }
    await new Promise((resolve) => setTimeout(resolve, EXTERNAL_CHECK_MS));
    const refused = await submit();
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error_kind, 'tier');
    assert.equal(refused.body.tier, 'member');
  });

  test('a demotion in this process takes effect on the next request', async () => {
    const member = await t.member('core');
    const token = await t.token(member, ['events:submit_recap']);
    const submit = () =>
      t.call('POST', '/api/ingest/highlights/pending', { token, body: { id: `local-${Date.now()}` } });
    assert.equal((await submit()).status, 202);
    await setMemberTier(t.deps.db, t.clock, t.deps.tiers, member.id, 'resident');
    assert.equal((await submit()).status, 403);
  });
});
