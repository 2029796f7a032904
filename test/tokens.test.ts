import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parseList, Token } from 'structured-headers';
import { MS } from '../src/clock.ts';
import { ERROR_KINDS } from '../src/core/errors.ts';
import { approveGrant } from '../src/domain/auth/device-grants.ts';
import { DeniedScopesError, mintToken } from '../src/domain/auth/tokens.ts';
import { type Member, setMemberTier } from '../src/domain/members/members.ts';
import { OPERATIONS } from '../src/operations/registry.ts';
import { isRestOperation, type Operation, type RestOperation } from '../src/operations/types.ts';
import { sha256 } from '../src/secrets.ts';
import { type CallResponse, startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';

const SETUP_CHECK = '/api/agent/setup-check';
const REVOKE = '/api/agent/token/revoke';
const HIGHLIGHTS = '/api/ingest/highlights/pending';
/** Clock of a fresh ManualClock: 12:00:00 UTC, the very start of a 60 s window. */
const WINDOW_START = Date.UTC(2026, 6, 16, 12, 0, 0);

const needsBearer = (op: Operation) => op.credential === 'bearer' || op.credential === 'bearer_or_session';

interface WindowStore {
  hit(key: string, expiresAt: number, now: number): Promise<number>;
}

/**
 * The count of a per-minute window. Those counters live in the database's counters table, unless
 * the deployment keeps short windows elsewhere (memory on embedded SQLite, Redis); then one more
 * hit through that store reveals the count.
 */
async function windowCount(t: TestApp, key: string): Promise<number> {
  const row = await t.deps.db
    .selectFrom('counters')
    .select('count')
    .where('key', '=', key)
    .executeTakeFirst();
  if (row) return Number(row.count);
  const store = (t.deps as unknown as { windowCounters?: WindowStore }).windowCounters;
  assert.ok(store, `no counter ${key}`);
  return (await store.hit(key, WINDOW_START + MS.minute, t.clock.now())) - 1;
}

let storySequence = 0;
function story(tag: string) {
  storySequence += 1;
  return {
    id: `2026-07-16-${tag}-${storySequence}-${Math.random().toString(36).slice(2, 8)}`,
    member_name: 'Token Tester',
    event_title: 'Token checks',
    dek: 'Checking what a token may do.',
  };
}

/** One request of a bearer operation, with an input that passes authentication whatever it then does. */
function callOperation(
  t: TestApp,
  op: RestOperation,
  headers: Record<string, string>,
): Promise<CallResponse> {
  if (op.inputFrom === 'query') return t.call(op.method, op.path, { headers });
  return t.call(op.method, op.path, { body: {}, headers });
}

function assertAuthGate(response: CallResponse, status: number, error: string, label: string): void {
  const about = `${label}: ${response.status} ${response.text}`;
  assert.equal(response.status, status, about);
  assert.equal(response.body.ok, false, about);
  assert.equal(response.body.error, error, about);
  assert.ok((ERROR_KINDS as readonly string[]).includes(response.body.error_kind), about);
}

/** The RateLimit and RateLimit-Policy lists (RFC 9651), as name → parameters. */
function rateLists(response: CallResponse) {
  const read = (header: string) => {
    const value = response.headers.get(header);
    assert.ok(value, `${header} missing`);
    const entries = new Map<string, Map<string, unknown>>();
    for (const [item, params] of parseList(value)) {
      // Policy names are sf-strings in the current draft, tokens in older ones.
      assert.ok(typeof item === 'string' || item instanceof Token, `${header}: ${value}`);
      entries.set(String(item), params);
    }
    return entries;
  };
  return { policy: read('ratelimit-policy'), current: read('ratelimit') };
}

function assertRatePolicy(
  response: CallResponse,
  name: string,
  expected: { q: number; w: number; r: number; t: number },
): void {
  const { policy, current } = rateLists(response);
  assert.deepEqual(Object.fromEntries(policy.get(name) ?? []), { q: expected.q, w: expected.w }, name);
  assert.deepEqual(Object.fromEntries(current.get(name) ?? []), { r: expected.r, t: expected.t }, name);
}

function assertLegacyRateHeaders(response: CallResponse, limit: number, remaining: number, reset: number) {
  assert.equal(response.headers.get('ratelimit-limit'), String(limit));
  assert.equal(response.headers.get('ratelimit-remaining'), String(remaining));
  assert.equal(response.headers.get('ratelimit-reset'), String(reset));
}

for (const engine of engines) {
  describe(`agent tokens (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine: engine.name });
    });
    after(() => t?.close());

    let memberSequence = 0;
    const member = (tier: string) => {
      memberSequence += 1;
      return t.member(tier, `Token ${tier} ${memberSequence}`);
    };
    const tokenRow = (token: string) =>
      t.deps.db.selectFrom('tokens').selectAll().where('hash', '=', sha256(token)).executeTakeFirst();

    test('a token is agt_ + 43 base64url characters (32 random bytes)', async () => {
      const owner = await member('member');
      const tokens = await Promise.all(Array.from({ length: 20 }, () => t.token(owner, ['read:public'])));
      for (const token of tokens) {
        assert.match(token, /^agt_[A-Za-z0-9_-]{43}$/);
        const bytes = Buffer.from(token.slice(4), 'base64url');
        assert.equal(bytes.length, 32);
        assert.equal(bytes.toString('base64url'), token.slice(4), 'canonical unpadded base64url');
      }
      assert.equal(new Set(tokens).size, tokens.length, 'every token is new');
    });

    test('only the SHA-256 and a 10-character display prefix are stored; the plaintext is nowhere', async () => {
      const owner = await member('core');
      const token = await t.token(owner, ['read:public', 'feedback:submit', 'events:submit_recap']);
      const row = await tokenRow(token);
      assert.ok(row, 'the row is found by the SHA-256 of the token');
      assert.equal(row.hash, sha256(token));
      assert.match(row.hash, /^[0-9a-f]{64}$/);
      assert.equal(row.prefix, token.slice(0, 10));
      assert.equal(row.member_id, owner.id);
      assert.equal(row.revoked_at, null);

      // Use it everywhere it can be used, then look for it in every table.
      assert.equal((await t.call('GET', SETUP_CHECK, { token })).body.ready, true);
      const feedback = await t.call('POST', '/api/agent/feedback', {
        token,
        body: { message: `Attributed feedback while checking token storage ${token.slice(0, 6)}.` },
      });
      assert.equal(feedback.status, 201, feedback.text);
      assert.equal(feedback.body.authenticated, true);
      const submitted = await t.call('POST', HIGHLIGHTS, {
        token,
        body: story('storage'),
        headers: { 'idempotency-key': 'storage-check' },
      });
      assert.equal(submitted.status, 202, submitted.text);

      const secret = token.slice(10);
      for (const table of await t.deps.db.introspection.getTables()) {
        const rows = await (t.deps.db as any).selectFrom(table.name).selectAll().execute();
        const dump = JSON.stringify(rows);
        assert.ok(!dump.includes(secret), `table ${table.name} holds the token's secret part`);
      }
    });

    test('mintToken refuses scopes above the tier with DeniedScopesError, and stores nothing', async () => {
      const owner = await member('member');
      const request = {
        scopes: ['read:public', 'events:rsvp', 'resources:book', 'admin:tier_review', 'root'],
        sandbox: false,
        name: 'too much',
        source: 'cli' as const,
      };
      await assert.rejects(mintToken(t.deps, owner, request), (error: unknown) => {
        assert.ok(error instanceof DeniedScopesError);
        assert.deepEqual(error.denied, ['resources:book', 'admin:tier_review', 'root']);
        assert.equal(error.tier, 'member');
        return true;
      });
      const stored = await t.deps.db
        .selectFrom('tokens')
        .select('id')
        .where('member_id', '=', owner.id)
        .execute();
      assert.equal(stored.length, 0);

      const minted = await mintToken(t.deps, owner, {
        ...request,
        scopes: ['read:public', 'events:rsvp', 'read:public'],
      });
      assert.deepEqual(JSON.parse(minted.row.scopes), ['read:public', 'events:rsvp']);
    });

    test('self-revoke answers {ok, revoked, prefix, already_revoked}, stores revoked_at, and repeats as 200', async () => {
      const owner = await member('public');
      const token = await t.token(owner, ['read:public']);
      const revokedAt = t.clock.now();
      const first = await t.call('POST', REVOKE, { token });
      assert.equal(first.status, 200, first.text);
      assert.deepEqual(first.body, {
        ok: true,
        revoked: true,
        prefix: token.slice(0, 10),
        already_revoked: false,
      });
      assert.equal(Number((await tokenRow(token))!.revoked_at), revokedAt);

      t.clock.advance(MS.minute);
      const again = await t.call('POST', REVOKE, { token, body: {} });
      assert.equal(again.status, 200, again.text);
      assert.deepEqual(again.body, {
        ok: true,
        revoked: true,
        prefix: token.slice(0, 10),
        already_revoked: true,
      });
      assert.equal(
        Number((await tokenRow(token))!.revoked_at),
        revokedAt,
        'the first revocation time is kept',
      );
    });

    test('after revocation every bearer operation answers 401 token_revoked with ok:false', async () => {
      const owner = await member('operator');
      const token = await t.token(owner, t.deps.tiers.scopesOf('operator'));
      const authorization = { authorization: `Bearer ${token}` };
      const gated = OPERATIONS.filter(isRestOperation).filter(
        (op) => needsBearer(op) && !op.acceptsRevokedToken,
      );
      assert.ok(gated.length > 0);
      for (const op of gated) {
        const response = await callOperation(t, op, authorization);
        assert.ok(![401, 403].includes(response.status), `${op.id} before revocation: ${response.text}`);
      }
      assert.equal((await t.call('POST', REVOKE, { token })).status, 200);
      for (const op of gated) {
        const response = await callOperation(t, op, authorization);
        assertAuthGate(response, 401, 'token_revoked', op.id);
        assert.equal(response.body.error_kind, 'unauthorized');
        assert.equal(response.headers.get('www-authenticate'), null, 'operation 401s carry no challenge');
      }
      const check = await t.call('GET', SETUP_CHECK, { token });
      assert.equal(check.status, 200);
      assert.equal(check.body.ready, false);
      assert.equal(check.body.checks.token, 'token_revoked');
      const feedback = await t.call('POST', '/api/agent/feedback', {
        token,
        body: { message: 'Sent with a revoked token, so filed anonymously.' },
      });
      assert.equal(feedback.status, 201);
      assert.equal(feedback.body.authenticated, false);
      const ticket = await t.deps.db
        .selectFrom('feedback')
        .select(['member_id', 'token_id'])
        .where('ticket_id', '=', feedback.body.ticket_id)
        .executeTakeFirstOrThrow();
      assert.deepEqual(ticket, { member_id: null, token_id: null });
    });

    test('a token can revoke only itself', async () => {
      const owner = await member('member');
      const first = await t.token(owner, ['read:public']);
      const second = await t.token(owner, ['read:public']);
      const secondRow = (await tokenRow(second))!;
      for (const body of [
        { token: second },
        { prefix: second.slice(0, 10) },
        { token_id: secondRow.id },
        { id: secondRow.id },
      ]) {
        const response = await t.call('POST', REVOKE, { token: first, body });
        assert.equal(response.status, 400, response.text);
        assert.equal(response.body.error_kind, 'validation');
      }
      assert.equal((await tokenRow(first))!.revoked_at, null, 'a refused request revokes nothing');
      assert.equal((await tokenRow(second))!.revoked_at, null);

      const revoked = await t.call('POST', `${REVOKE}?token=${encodeURIComponent(second)}`, { token: first });
      assert.equal(revoked.status, 200);
      assert.equal(revoked.body.prefix, first.slice(0, 10));
      assert.notEqual((await tokenRow(first))!.revoked_at, null);
      assert.equal((await tokenRow(second))!.revoked_at, null, 'the other token is untouched');
      assert.equal((await t.call('GET', SETUP_CHECK, { token: second })).body.ready, true);
    });

    test('the tier is checked live: a demoted member gets 403 tier, a promoted one gets through', async () => {
      const owner = await member('core');
      const token = await t.token(owner, ['read:public', 'events:submit_recap']);
      const accepted = await t.call('POST', HIGHLIGHTS, { token, body: story('before-demotion') });
      assert.equal(accepted.status, 202, accepted.text);

      await setMemberTier(t.deps.db, t.clock, t.deps.tiers, owner.id, 'member');
      const refusedStory = story('after-demotion');
      const refused = await t.call('POST', HIGHLIGHTS, { token, body: refusedStory });
      assertAuthGate(refused, 403, 'tier_insufficient', 'demoted');
      assert.equal(refused.body.error_kind, 'tier');
      assert.equal(refused.body.tier, 'member');
      assert.equal(refused.body.required_scope, 'events:submit_recap');
      assert.equal(refused.headers.get('www-authenticate'), null);
      const stored = await t.deps.db
        .selectFrom('highlights')
        .select('id')
        .where('id', '=', refusedStory.id)
        .executeTakeFirst();
      assert.equal(stored, undefined, 'nothing stored for the refused call');

      const check = await t.call('GET', SETUP_CHECK, { token });
      assert.equal(check.body.checks.tier, 'member');
      assert.deepEqual(check.body.checks.scopes_suspended_by_tier, ['events:submit_recap']);
      // Operations that need no scope the tier lost keep working.
      assert.equal((await t.call('GET', HIGHLIGHTS, { token })).status, 200);

      await setMemberTier(t.deps.db, t.clock, t.deps.tiers, owner.id, 'core');
      const again = await t.call('POST', HIGHLIGHTS, { token, body: refusedStory });
      assert.equal(again.status, 202, again.text);
      const row = await t.deps.db
        .selectFrom('highlights')
        .select('member_id')
        .where('id', '=', refusedStory.id)
        .executeTakeFirstOrThrow();
      assert.equal(row.member_id, owner.id);
    });

    test('a token without the scope gets 403 insufficient_scope naming the tier', async () => {
      const owner = await member('core');
      const token = await t.token(owner, ['read:public']);
      const refused = await t.call('POST', HIGHLIGHTS, { token, body: story('no-scope') });
      assertAuthGate(refused, 403, 'insufficient_scope', 'no scope');
      assert.equal(refused.body.error_kind, 'insufficient_scope');
      assert.equal(refused.body.tier, 'core');
    });

    describe('setup-check', () => {
      test('a valid token is ready, with scopes, member, tier, sandbox and prefix', async () => {
        const owner: Member = await member('resident');
        const token = await t.token(owner, ['read:public', 'directory:search']);
        const response = await t.call('GET', SETUP_CHECK, { token });
        assert.equal(response.status, 200);
        assert.equal(response.body.ready, true);
        assert.deepEqual(response.body.checks.scopes, ['read:public', 'directory:search']);
        assert.equal(response.body.checks.member_id, owner.id);
        assert.equal(response.body.checks.tier, 'resident');
        assert.equal(response.body.checks.sandbox, false);
        assert.equal(response.body.checks.token_prefix, token.slice(0, 10));
        assert.deepEqual(response.body.missing, []);
        assert.equal(response.body.mcp.url, `${t.baseUrl}/api/mcp`);
        assert.equal(response.body.mcp.transport, 'streamable-http');
        const extra = await t.call('GET', `${SETUP_CHECK}?verbose=1&debug=true`, { token });
        assert.equal(extra.status, 200, 'always 200: query parameters it does not use are ignored');
        assert.equal(extra.body.ready, true);
      });

      test('no token, or a refused one, is still 200: not ready, with what is missing and what to do', async () => {
        const owner = await member('public');
        const revoked = await t.token(owner, ['read:public']);
        assert.equal((await t.call('POST', REVOKE, { token: revoked })).status, 200);
        const cases: [string, Record<string, string>, string][] = [
          ['no token', {}, 'missing'],
          ['malformed', { authorization: 'Bearer agt_not-a-token' }, 'invalid_token'],
          ['unknown', { authorization: `Bearer agt_${'A'.repeat(43)}` }, 'invalid_token'],
          ['other scheme', { authorization: 'Basic dXNlcjpwYXNz' }, 'invalid_authorization'],
          ['empty bearer', { authorization: 'Bearer ' }, 'invalid_authorization'],
          ['revoked', { authorization: `Bearer ${revoked}` }, 'token_revoked'],
        ];
        const ready = await t.call('GET', SETUP_CHECK, { token: await t.token(owner, ['read:public']) });
        for (const [label, headers, problem] of cases) {
          const response = await t.call('GET', SETUP_CHECK, { headers });
          assert.equal(response.status, 200, `${label}: ${response.text}`);
          assert.equal(response.body.ready, false, label);
          assert.equal(response.body.checks.token, problem, label);
          assert.ok(response.body.missing.includes('agent_token'), label);
          assert.ok(response.body.next_actions.length >= 2, label);
          assert.ok(
            response.body.next_actions.some((a: string) => a.includes(`${t.baseUrl}/api/agent/signup/start`)),
            `${label}: points at the device flow`,
          );
          if (problem !== 'missing') assert.ok(response.body.next_actions[0].includes(problem), label);
          assert.deepEqual(response.body.mcp, ready.body.mcp, `${label}: the same MCP recipe`);
        }
      });

      test('the sandbox flag fixed at mint is reported, and sandbox writes are simulated', async () => {
        const owner = await member('core');
        const sandboxed = await t.token(owner, ['events:submit_recap'], { sandbox: true });
        const check = await t.call('GET', SETUP_CHECK, { token: sandboxed });
        assert.equal(check.body.checks.sandbox, true);
        assert.equal((await tokenRow(sandboxed))!.sandbox, 1);

        const body = story('sandbox');
        const receipt = await t.call('POST', HIGHLIGHTS, { token: sandboxed, body });
        assert.equal(receipt.status, 200, receipt.text);
        assert.equal(receipt.body.sandbox, true);
        assert.equal(receipt.body.simulated, true);
        assert.equal(receipt.body.would_have.action, 'submitHighlight');
        assert.equal(receipt.body.would_have.scope, 'events:submit_recap');
        const stored = await t.deps.db
          .selectFrom('highlights')
          .select('id')
          .where('id', '=', body.id)
          .execute();
        assert.equal(stored.length, 0, 'a sandbox write stores nothing');

        // Through the device flow, the flag asked for at start is the one the token carries.
        const started = await t.call('POST', '/api/agent/signup/start', {
          body: { scopes: ['read:public'], sandbox: true },
        });
        assert.equal((await approveGrant(t.deps, started.body.user_code, owner.id)).ok, true);
        const delivered = await t.call(
          'GET',
          `/api/agent/signup/poll?device_code=${encodeURIComponent(started.body.device_code)}`,
        );
        assert.equal(delivered.body.sandbox, true);
        const viaFlow = await t.call('GET', SETUP_CHECK, { token: delivered.body.agent_token });
        assert.equal(viaFlow.body.checks.sandbox, true);
      });
    });

    describe('rate limits', () => {
      test('RateLimit and RateLimit-Policy on an anonymous read, a 401, a 403 and a token call', async () => {
        const fresh = await startTestApp({ engine: engine.name });
        try {
          const read = await fresh.call('GET', '/api/agent/signup/poll');
          assert.equal(read.status, 200);
          assertRatePolicy(read, 'anonymous', { q: 120, w: 60, r: 119, t: 60 });
          assertLegacyRateHeaders(read, 120, 119, 60);

          fresh.clock.advance(15 * MS.second);
          const unauthorized = await fresh.call('GET', HIGHLIGHTS);
          assert.equal(unauthorized.status, 401);
          assertRatePolicy(unauthorized, 'anonymous', { q: 120, w: 60, r: 118, t: 45 });
          assertLegacyRateHeaders(unauthorized, 120, 118, 45);

          const owner = await fresh.member('core', 'Rate Header Tester');
          const unscoped = await fresh.token(owner, ['read:public']);
          const forbidden = await fresh.call('POST', HIGHLIGHTS, { token: unscoped, body: story('rate') });
          assert.equal(forbidden.status, 403);
          assertRatePolicy(forbidden, 'anonymous', { q: 120, w: 60, r: 117, t: 45 });
          assertLegacyRateHeaders(forbidden, 120, 117, 45);

          const authenticated = await fresh.call('GET', SETUP_CHECK, { token: unscoped });
          assert.equal(authenticated.status, 200);
          assertRatePolicy(authenticated, 'token', { q: 1200, w: 60, r: 1199, t: 45 });
          assert.equal(
            rateLists(authenticated).policy.has('anonymous'),
            false,
            'a token call is the token policy',
          );

          // Several policies: each is listed; the legacy headers describe the tightest.
          const feedback = await fresh.call('POST', '/api/agent/feedback', {
            body: { message: 'Checking that every policy is named in the rate headers.' },
          });
          assert.equal(feedback.status, 201);
          assertRatePolicy(feedback, 'anonymous', { q: 120, w: 60, r: 116, t: 45 });
          assertRatePolicy(feedback, 'feedback', { q: 10, w: 3600, r: 9, t: 3585 });
          assertLegacyRateHeaders(feedback, 10, 9, 3585);
        } finally {
          await fresh.close();
        }
      });

      test('the anonymous policy: the request past the limit is 429, and 401s count toward it', async () => {
        const fresh = await startTestApp({ engine: engine.name, limits: { anonymousPerMinute: 5 } });
        try {
          fresh.clock.advance(10 * MS.second);
          for (let i = 0; i < 3; i++) assert.equal((await fresh.call('GET', SETUP_CHECK)).status, 200);
          for (let i = 0; i < 2; i++) assert.equal((await fresh.call('GET', HIGHLIGHTS)).status, 401);

          const limited = await fresh.call('GET', SETUP_CHECK);
          assert.equal(limited.status, 429, limited.text);
          assert.equal(limited.body.error, 'rate_limited');
          assert.equal(limited.body.error_kind, 'rate_limit');
          assert.equal(limited.headers.get('retry-after'), '50');
          assert.equal(limited.body.retry_after_seconds, 50);
          assert.deepEqual(limited.body.rate, { current: 5, remaining: 0, limit: 5 });
          assertRatePolicy(limited, 'anonymous', { q: 5, w: 60, r: 0, t: 50 });

          const rejected = await fresh.call('GET', HIGHLIGHTS);
          assert.equal(rejected.status, 429, 'a would-be 401 is refused too once the window is spent');
          assert.equal(rejected.body.error_kind, 'rate_limit');

          // A token has its own policy: the spent anonymous window does not block it.
          const owner = await fresh.member('public', 'Rate Token Owner');
          const token = await fresh.token(owner, ['read:public']);
          assert.equal((await fresh.call('GET', SETUP_CHECK, { token })).status, 200);

          assert.equal(await windowCount(fresh, `anonymous:127.0.0.1:${WINDOW_START}`), 7);

          fresh.clock.advance(50 * MS.second);
          assert.equal((await fresh.call('GET', SETUP_CHECK)).status, 200, 'a new window opens');
        } finally {
          await fresh.close();
        }
      });

      test('the real default: 120 anonymous requests per 60 s, the 121st is 429', async () => {
        const fresh = await startTestApp({ engine: engine.name });
        try {
          assert.equal(fresh.deps.config.limits.anonymousPerMinute, 120);
          for (let batch = 0; batch < 6; batch++) {
            const responses = await Promise.all(
              Array.from({ length: 20 }, () => fresh.call('GET', '/api/agent/signup/poll')),
            );
            assert.deepEqual(
              responses.map((r) => r.status),
              Array(20).fill(200),
            );
          }
          const limited = await fresh.call('GET', '/api/agent/signup/poll');
          assert.equal(limited.status, 429);
          assert.equal(limited.headers.get('retry-after'), '60');
          assert.equal(limited.body.retry_after_seconds, 60);
          assert.deepEqual(limited.body.rate, { current: 120, remaining: 0, limit: 120 });
        } finally {
          await fresh.close();
        }
      });

      test('counters are exact under concurrency: 50 at once against 20 → exactly 20 pass', async () => {
        const fresh = await startTestApp({ engine: engine.name, limits: { anonymousPerMinute: 20 } });
        try {
          const responses = await Promise.all(
            Array.from({ length: 50 }, () => fresh.call('GET', SETUP_CHECK)),
          );
          const passed = responses.filter((r) => r.status === 200);
          const limited = responses.filter((r) => r.status === 429);
          assert.equal(passed.length, 20, responses.map((r) => r.status).join(','));
          assert.equal(limited.length, 30);
          const remaining = passed
            .map((r) => Number(r.headers.get('ratelimit-remaining')))
            .sort((a, b) => a - b);
          assert.deepEqual(
            remaining,
            Array.from({ length: 20 }, (_, i) => i),
            'each pass saw its own count',
          );
          assert.equal(
            await windowCount(fresh, `anonymous:127.0.0.1:${WINDOW_START}`),
            50,
            'every hit counted',
          );
          const stray = await fresh.deps.db
            .selectFrom('counters')
            .select('key')
            .where('key', 'like', 'anonymous:%')
            .where('key', '!=', `anonymous:127.0.0.1:${WINDOW_START}`)
            .execute();
          assert.deepEqual(stray, [], 'one window, one key');
        } finally {
          await fresh.close();
        }
      });
    });
  });
}
