import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createSession, SESSION_COOKIE } from '../src/domain/auth/sessions.ts';
import { appendEvent } from '../src/domain/eventlog/eventlog.ts';
import { decideHighlight } from '../src/domain/highlights/highlights.ts';
import { getMember, type Member } from '../src/domain/members/members.ts';
import { decideTierRequest, listTierRequests } from '../src/domain/members/tier-requests.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';
import { runCli, runCliJson } from './support/processes.ts';

for (const engine of engines) {
  describe(`membership and the event log (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine: engine.name });
    });
    after(() => t?.close());

    async function signIn(member: Member) {
      const session = await createSession(t.deps.db, t.clock, member.id);
      return { cookie: `${SESSION_COOKIE}=${session}` };
    }
    const as = (headers: Record<string, string>, method: string, path: string, body?: unknown) =>
      t.call(method, path, { headers, body });

    test('session-only operations refuse bearers and anonymous callers', async () => {
      const member = await t.member('core');
      const token = await t.token(member, ['membership:read', 'membership:write']);
      for (const [method, path] of [
        ['GET', '/api/tier/me'],
        ['POST', '/api/tier/request'],
        ['DELETE', '/api/tier/request'],
        ['GET', '/api/events/next'],
      ]) {
        const withBearer = await t.call(method, path, {
          token,
          body: method === 'POST' ? { tier: 'operator' } : undefined,
        });
        assert.equal(withBearer.status, 401, `${method} ${path}`);
        assert.equal(withBearer.body.error, 'session_required');
        assert.equal(withBearer.body.ok, false);
        const anonymous = await t.call(method, path);
        assert.equal(anonymous.status, 401);
        assert.equal(anonymous.body.error, 'session_required');
      }
    });

    test('tier request: refused when not higher or not self-requestable, then pending, cancelled, and replaced', async () => {
      const member = await t.member('member', 'Mina');
      const session = await signIn(member);
      const me = await as(session, 'GET', '/api/tier/me');
      assert.equal(me.status, 200);
      assert.deepEqual(
        {
          tier: me.body.tier,
          pending: me.body.pending,
          history: me.body.history,
          email: me.body.email,
          name: me.body.display_name,
        },
        { tier: 'member', pending: null, history: [], email: member.email, name: 'Mina' },
      );
      const reasons: Record<string, string> = {
        public: 'Tier public is not above the current tier member.',
        member: 'Tier member is not above the current tier member.',
        operator: 'Tier operator is granted by an operator, not requested.',
        emperor: 'There is no tier "emperor".',
      };
      for (const [tier, reason] of Object.entries(reasons)) {
        const refused = await as(session, 'POST', '/api/tier/request', { tier });
        assert.equal(refused.status, 400, tier);
        assert.equal(refused.body.error, 'tier_not_requestable', tier);
        assert.equal(refused.body.message, reason, tier);
        assert.equal(refused.body.current_tier, 'member');
        assert.deepEqual(refused.body.requestable, ['resident', 'core']);
      }
      const tooLong = await as(session, 'POST', '/api/tier/request', { tier: 'core', note: 'x'.repeat(601) });
      assert.equal(tooLong.status, 400);
      assert.equal(tooLong.body.field, 'note');

      const requested = await as(session, 'POST', '/api/tier/request', {
        tier: 'resident',
        note: 'I run the reading group',
      });
      assert.equal(requested.status, 200, requested.text);
      assert.equal(requested.body.pending.tier, 'resident');
      const replaced = await as(session, 'POST', '/api/tier/request', { tier: 'core' });
      assert.equal(replaced.body.pending.tier, 'core');
      const rows = await t.deps.db
        .selectFrom('tier_requests')
        .select(['tier', 'status'])
        .where('member_id', '=', member.id)
        .orderBy('created_at')
        .execute();
      assert.deepEqual(rows.map((r) => `${r.tier}:${r.status}`).sort(), [
        'core:pending',
        'resident:superseded',
      ]);
      const cancelled = await as(session, 'DELETE', '/api/tier/request');
      assert.deepEqual(cancelled.body, { ok: true, was_pending: true });
      const again = await as(session, 'DELETE', '/api/tier/request');
      assert.deepEqual(again.body, { ok: true, was_pending: false });
      const after = await as(session, 'GET', '/api/tier/me');
      assert.equal(after.body.pending, null);
      assert.equal(after.body.history.length, 2);
    });

    test('request → operators see tier_requested → approval → the member sees tier_approved and gains scopes', async () => {
      const operator = await t.member('operator', 'Olga');
      const member = await t.member('member', 'Rae');
      const token = await t.token(member, ['events:rsvp']);
      const memberSession = await signIn(member);
      const operatorSession = await signIn(operator);
      const before = await as(operatorSession, 'GET', '/api/events/next');
      const request = await as(memberSession, 'POST', '/api/tier/request', {
        tier: 'resident',
        note: 'please',
      });
      assert.equal(request.status, 200);

      const operatorLog = await as(
        operatorSession,
        'GET',
        `/api/events/next?since=${before.body.cursor}&types=tier_requested`,
      );
      const told = operatorLog.body.events.find(
        (e: { target: { request_id: string } }) => e.target.request_id === request.body.pending.id,
      );
      assert.ok(told, JSON.stringify(operatorLog.body));
      assert.equal(told.type, 'tier_requested');
      assert.deepEqual(told.payload, { from: 'member', to: 'resident', note: 'please' });
      assert.deepEqual(told.actions[0], {
        label: 'Approve',
        mcp_tool: 'ic_admin_tier_request_decide',
        args: { id: request.body.pending.id, decision: 'approve' },
        consequential: true,
      });

      const pending = await listTierRequests(t.deps, 'pending', { limit: 50 });
      assert.ok(pending.rows.some((r) => r.id === request.body.pending.id));
      assert.equal(
        await decideTierRequest(t.deps, request.body.pending.id, 'Olga', {
          decision: 'approve',
          tier: 'core',
        }),
        'done',
      );
      assert.equal(
        await decideTierRequest(t.deps, request.body.pending.id, 'Olga', { decision: 'deny' }),
        'not_pending',
      );

      const me = await as(memberSession, 'GET', '/api/tier/me');
      assert.equal(me.body.tier, 'core', 'an operator may grant a different tier than asked');
      assert.equal(me.body.history[0].status, 'approved');
      const log = await as(
        memberSession,
        'GET',
        '/api/events/next?types=tier_approved,tier_denied,not_a_type',
      );
      assert.equal(log.body.events.length, 1);
      assert.equal(log.body.events[0].type, 'tier_approved');
      assert.deepEqual(log.body.events[0].payload, { requested: 'resident', granted: 'core' });
      // The token keeps its scopes (fixed at mint) and the member can now mint core scopes.
      const check = await t.call('GET', '/api/agent/setup-check', { token });
      assert.equal(check.body.checks.tier, 'core');
      const promoted = await getMember(t.deps.db, member.id);
      assert.ok(await t.token(promoted!, ['resources:book']));
    });

    test('token_minted, token_revoked, highlight_approved and highlight_rejected reach the member', async () => {
      const member = await t.member('core');
      const session = await signIn(member);
      const token = await t.token(member, ['events:submit_recap']);
      for (const id of ['log-story-a', 'log-story-b']) {
        const submitted = await t.call('POST', '/api/ingest/highlights/pending', {
          token,
          body: { id: `${id}-${engine.name}` },
        });
        assert.equal(submitted.status, 202);
      }
      assert.equal(await decideHighlight(t.deps, `log-story-a-${engine.name}`, 'approve', 'Olga'), 'done');
      assert.equal(await decideHighlight(t.deps, `log-story-b-${engine.name}`, 'reject', 'Olga'), 'done');
      assert.equal((await t.call('POST', '/api/agent/token/revoke', { token })).status, 200);
      const log = await as(session, 'GET', '/api/events/next');
      assert.deepEqual(
        log.body.events.map((e: { id: number; type: string }) => [e.id, e.type]),
        [
          [1, 'token_minted'],
          [2, 'highlight_approved'],
          [3, 'highlight_rejected'],
          [4, 'token_revoked'],
        ],
      );
      assert.equal(log.body.cursor, 4);
      assert.equal(log.body.has_more, false);
      assert.equal(log.body.events[1].target.story_id, `log-story-a-${engine.name}`);
      const quiet = await as(session, 'GET', '/api/events/next?since=4');
      assert.deepEqual([quiet.body.events, quiet.body.cursor, quiet.body.has_more], [[], 4, false]);
      for (const bad of ['since=-1', 'limit=0', 'limit=501', 'since=abc']) {
        assert.equal((await as(session, 'GET', `/api/events/next?${bad}`)).status, 400, bad);
      }
    });

    test('1,200 events read 500 at a time in three pages, none skipped or repeated, while more arrive', async () => {
      const member = await t.member('member');
      const session = await signIn(member);
      const append = (n: number) =>
        t.deps.db
          .transaction()
          .execute((trx) =>
            appendEvent(
              trx,
              member.id,
              { type: 'rsvp_confirmed', actor: { kind: 'test' }, target: { n } },
              t.clock.now(),
            ),
          );
      for (let n = 0; n < 1200; n += 100) {
        await Promise.all(Array.from({ length: 100 }, (_, i) => append(n + i)));
      }
      const seen: number[] = [];
      let since = 0;
      let pages = 0;
      let concurrent = Promise.resolve();
      for (;;) {
        // Appends race the reader; ids keep increasing by one and every page stays contiguous.
        concurrent = concurrent.then(() =>
          Promise.all(Array.from({ length: 5 }, (_, i) => append(10_000 + pages * 5 + i))).then(() => {}),
        );
        const page = await as(session, 'GET', `/api/events/next?since=${since}&limit=500`);
        assert.equal(page.status, 200);
        pages++;
        const ids = page.body.events.map((e: { id: number }) => e.id);
        for (const [i, id] of ids.entries()) assert.equal(id, since + i + 1, 'no gaps');
        seen.push(...ids);
        since = page.body.cursor;
        if (!page.body.has_more || seen.length >= 1200) break;
      }
      await concurrent;
      assert.equal(pages, 3);
      assert.deepEqual(
        seen.slice(0, 1200),
        Array.from({ length: 1200 }, (_, i) => i + 1),
      );
      assert.equal(new Set(seen).size, seen.length, 'no repeats');
      const rest = await as(session, 'GET', `/api/events/next?since=${since}&limit=500`);
      const total = await t.deps.db
        .selectFrom('event_log')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('recipient_id', '=', member.id)
        .executeTakeFirstOrThrow();
      assert.equal(seen.length + rest.body.events.length, Number(total.n));
    });
  });
}

describe('tier requests from the command line (sqlite)', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ engine: 'sqlite' });
  });
  after(() => t?.close());

  test('tier list, approve and deny decide requests in the shared database', async () => {
    const olga = await t.member('operator', 'Olga');
    const first = await t.member('member');
    const second = await t.member('member');
    for (const member of [first, second]) {
      const session = await createSession(t.deps.db, t.clock, member.id);
      const response = await t.call('POST', '/api/tier/request', {
        headers: { cookie: `${SESSION_COOKIE}=${session}` },
        body: { tier: 'resident' },
      });
      assert.equal(response.status, 200);
    }
    const pending = await runCliJson<{ id: string; member_id: string }[]>(t.database.url, ['tier', 'list']);
    const byMember = new Map(pending.map((r) => [r.member_id, r.id]));
    assert.equal(byMember.size, 2);
    const approved = await runCli(t.database.url, [
      'tier',
      'approve',
      byMember.get(first.id)!,
      '--by',
      olga.email,
    ]);
    assert.equal(approved.code, 0, approved.stderr);
    const denied = await runCli(t.database.url, [
      'tier',
      'deny',
      byMember.get(second.id)!,
      '--reason',
      'not yet',
      '--by',
      olga.id,
    ]);
    assert.equal(denied.code, 0, denied.stderr);
    const again = await runCli(t.database.url, ['tier', 'deny', byMember.get(second.id)!, '--by', olga.id]);
    assert.equal(again.code, 1, 'already decided');
    assert.match(again.stderr, /already decided \(not_pending\)/);
    assert.equal((await getMember(t.deps.db, first.id))?.tier, 'resident');
    assert.equal((await getMember(t.deps.db, second.id))?.tier, 'member');
    const rows = await t.deps.db
      .selectFrom('tier_requests')
      .select(['member_id', 'status', 'reason'])
      .execute();
    assert.deepEqual(
      rows.map((r) => [r.member_id === first.id ? 'first' : 'second', r.status, r.reason]).sort(),
      [
        ['first', 'approved', null],
        ['second', 'denied', 'not yet'],
      ],
    );
  });
});
