import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createSession, revokeSession, SESSION_COOKIE, SESSION_TTL_MS } from '../src/domain/auth/sessions.ts';
import { setMemberTier } from '../src/domain/members/members.ts';
import { getMyTier } from '../src/operations/membership/tier.ts';
import { runOperationNow } from '../src/operations/pipeline/run.ts';
import { sha256 } from '../src/secrets.ts';
import { openDatabase } from '../src/storage/database.ts';
import { EXTERNAL_CHECK_MS, InvalidatingCache } from '../src/storage/engine/invalidating-cache.ts';
import { callRequestFrom } from '../src/surfaces/rest.ts';
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

  const tierMe = (session: string) =>
    t.call('GET', '/api/tier/me', { headers: { cookie: `${SESSION_COOKIE}=${session}` } });

  /** /api/tier/me run in process, as the REST route runs it: answered at once while the status is kept. */
  function keptTierAnswer(session: string) {
    const headers = { cookie: `${SESSION_COOKIE}=${session}` };
    const answer = runOperationNow(
      t.deps,
      getMyTier,
      callRequestFrom({ id: 'kept', ip: '198.51.100.7', headers }, {}),
    );
    assert.ok(!(answer instanceof Promise), 'a kept status is answered at once');
    assert.equal(answer.status, 200);
    assert.ok(answer.bytes && answer.text, 'the answer is kept serialized');
    return answer;
  }

  test('a live session is cached like a bearer, and a sign-out or a tier change counts from the next request', async () => {
    const member = await t.member('resident');
    const session = await createSession(t.deps.db, t.clock, member.id);
    const first = await tierMe(session);
    assert.equal(first.status, 200);
    assert.equal(first.body.tier, 'resident');
    assert.ok(t.deps.database.authCache?.get(`session:${sha256(session)}`), 'the session lookup is cached');
    await setMemberTier(t.deps.db, t.clock, t.deps.tiers, member.id, 'core');
    assert.equal((await tierMe(session)).body.tier, 'core', 'the tier change is read at once');
    await revokeSession(t.deps.db, t.clock, session);
    assert.equal(t.deps.database.authCache?.get(`session:${sha256(session)}`), undefined);
    const refused = await tierMe(session);
    assert.equal(refused.status, 401);
    assert.equal(refused.body.error, 'session_expired');
  });

  test('a cached session ends at its expiry, and a revocation by another process within 250 ms', async () => {
    const member = await t.member('resident');
    const session = await createSession(t.deps.db, t.clock, member.id);
    assert.equal((await tierMe(session)).status, 200);
    t.clock.advance(SESSION_TTL_MS);
    assert.equal((await tierMe(session)).status, 401, 'expired although cached');
    t.clock.advance(-SESSION_TTL_MS);

    const other = await createSession(t.deps.db, t.clock, member.id);
    assert.equal((await tierMe(other)).status, 200);
    const elsewhere = openDatabase(t.database.url);
    try {
      await revokeSession(elsewhere.db, t.clock, other);
    } finally {
      await elsewhere.close();
    }
    await new Promise((resolve) => setTimeout(resolve, EXTERNAL_CHECK_MS));
    assert.equal((await tierMe(other)).status, 401);
  });

  test('the tier status behind /api/tier/me is cached, and a tier request or a change elsewhere shows at once or within 250 ms', async () => {
    const member = await t.member('resident');
    const session = await createSession(t.deps.db, t.clock, member.id);
    const first = await tierMe(session);
    assert.equal(first.body.pending, null);
    assert.ok(t.deps.database.authCache?.get(`tier-status ${member.id}`), 'the tier status is cached');
    // The kept status's answer is serialized once: the same bytes again, which are what the wire got.
    const kept = keptTierAnswer(session);
    assert.equal(keptTierAnswer(session).bytes, kept.bytes, 'the kept answer is not serialized again');
    assert.equal(kept.text, first.text);
    // Through the service (a write to tier_requests): the very next read shows the pending request.
    const asked = await t.call('POST', '/api/tier/request', {
      headers: { cookie: `${SESSION_COOKIE}=${session}`, origin: t.baseUrl },
      body: { tier: 'core', note: 'cache test' },
    });
    assert.equal(asked.status, 200, asked.text);
    const pending = await tierMe(session);
    assert.equal(pending.body.pending.tier, 'core');
    assert.equal(keptTierAnswer(session).text, pending.text, 'the change is not hidden by the kept answer');
    const stored = await t.deps.db
      .selectFrom('tier_requests')
      .select(['tier', 'status'])
      .where('member_id', '=', member.id)
      .execute();
    assert.deepEqual(stored, [{ tier: 'core', status: 'pending' }]);
    // Another process (the CLI) renames the member: seen within EXTERNAL_CHECK_MS.
    const other = openDatabase(t.database.url);
    try {
      await other.db.updateTable('members').set({ name: 'Renamed' }).where('id', '=', member.id).execute();
    } finally {
      await other.close();
    }
    await new Promise((resolve) => setTimeout(resolve, EXTERNAL_CHECK_MS));
    const renamed = await tierMe(session);
    assert.equal(renamed.body.display_name, 'Renamed');
    assert.equal(renamed.body.pending.tier, 'core');
  });

  test('a kept tier answer of 1 KB or more goes gzipped to a client that accepts gzip, the same JSON', async () => {
    const member = await t.member('resident');
    const session = await createSession(t.deps.db, t.clock, member.id);
    const now = t.clock.now();
    await t.deps.db
      .insertInto('tier_requests')
      .values(
        Array.from({ length: 6 }, (_, i) => ({
          id: `treq_gzip_${member.id}_${i}`,
          member_id: member.id,
          tier: 'core',
          note: null,
          status: 'denied',
          created_at: now - i,
          decided_at: now - i,
          decided_by: 'operator',
          granted_tier: null,
          reason: `Not yet, round ${i}: ${'come to a few more events first. '.repeat(6)}`,
        })),
      )
      .execute();
    const cookie = `${SESSION_COOKIE}=${session}`;
    // fetch asks for gzip unless told otherwise.
    const plain = await t.call('GET', '/api/tier/me', { headers: { cookie, 'accept-encoding': 'identity' } });
    assert.equal(plain.status, 200);
    assert.equal(plain.body.history.length, 6);
    assert.ok(Buffer.byteLength(plain.text) >= 1024, `${Buffer.byteLength(plain.text)} bytes`);
    assert.equal(plain.headers.get('content-encoding'), null);
    assert.equal(plain.headers.get('vary'), 'accept-encoding');
    const zipped = await t.call('GET', '/api/tier/me', { headers: { cookie, 'accept-encoding': 'gzip' } });
    assert.equal(zipped.status, 200);
    assert.equal(zipped.headers.get('content-encoding'), 'gzip');
    assert.equal(zipped.headers.get('vary'), 'accept-encoding');
    assert.equal(zipped.text, plain.text, 'the same JSON once unzipped');
  });
});

// The PostgreSQL instances' cache is suspended while its change listener is down (src/storage/engine/auth-listener.ts).
describe('lookup cache suspension', () => {
  test('while suspended nothing is answered or kept; a lookup begun before a suspension is not kept after it', () => {
    const cache = new InvalidatingCache<string>(() => 0);
    cache.set('a', 'row a', cache.snapshot());
    assert.equal(cache.get('a'), 'row a');
    const before = cache.snapshot();
    cache.suspend();
    assert.equal(cache.active, false);
    assert.equal(cache.get('a'), undefined);
    cache.set('b', 'row b', cache.snapshot());
    assert.equal(cache.get('b'), undefined);
    cache.resume();
    assert.equal(cache.active, true);
    assert.equal(cache.get('a'), undefined, 'resumed empty');
    cache.set('c', 'row c', before);
    assert.equal(cache.get('c'), undefined, 'read before the suspension: not kept');
    cache.set('d', 'row d', cache.snapshot());
    assert.equal(cache.get('d'), 'row d');
  });
});
