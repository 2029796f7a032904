import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { createSession, SESSION_COOKIE } from '../src/domain/auth/sessions.ts';
import { DeniedScopesError } from '../src/domain/auth/tokens.ts';
import { linkAccount } from '../src/domain/leaderboard/links.ts';
import { refreshLeaderboard, scheduleLeaderboardRefresh } from '../src/domain/leaderboard/refresh.ts';
import { type Member, setMemberTier } from '../src/domain/members/members.ts';
import { a2aClient } from './support/a2a.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';
import { FakeCodeHost } from './support/fake-code-host.ts';
import { killAllChildren, runCli } from './support/processes.ts';
import { waitUntil } from './support/wait.ts';

const OPTIN = '/api/leaderboard/optin';
const ME = '/api/leaderboard/me';
const BOARD = '/api/leaderboard';
const SERVICE_TOKEN = 'ghp_service_token_for_counting';
// The test clock starts on Thursday 2026-07-16 12:00 UTC: its ISO week began on Monday the 13th.
const THURSDAY = Date.UTC(2026, 6, 16, 12);
const WEEK = { from: '2026-07-13T00:00:00.000Z', to: '2026-07-20T00:00:00.000Z' };

let sequence = 0;

for (const engine of engines) {
  describe(`leaderboard (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    let host: FakeCodeHost;
    const a2a = a2aClient(() => t);

    before(async () => {
      host = await new FakeCodeHost().start();
      t = await startTestApp({
        engine: engine.name,
        limits: { leaderboardOptInPerHour: 6 },
        config: {
          codeHost: {
            webUrl: host.url,
            apiUrl: host.apiUrl,
            clientId: host.clientId,
            clientSecret: host.clientSecret,
            apiToken: SERVICE_TOKEN,
            timeoutMs: 500,
          },
        },
      });
    });
    after(async () => {
      await killAllChildren();
      await t?.close();
      await host?.close();
    });
    // Each test builds its own board from nothing.
    beforeEach(async () => {
      t.clock.set(THURSDAY);
      await t.deps.db.deleteFrom('leaderboard_counts').execute();
      await t.deps.db.deleteFrom('leaderboard_weeks').execute();
      await t.deps.db.deleteFrom('vcs_links').execute();
      await t.deps.db.deleteFrom('settings').where('key', '=', 'leaderboard_refresh_lease').execute();
      host.searchFailures.clear();
      host.commits.clear();
      host.requests.length = 0;
    });

    /** A core member with a linked host account (as the link page would record it). */
    async function linked(name: string, options: { optIn?: boolean } = {}) {
      sequence += 1;
      const member = await t.member('core', name);
      const login = `${name.toLowerCase()}${sequence}`;
      await linkAccount(t.deps, member.id, { id: String(9000 + sequence), login }, 'token');
      const token = await t.token(member, ['leaderboard:manage']);
      if (options.optIn) assert.equal((await optIn(token, true)).status, 200);
      return { member, login, token };
    }
    const optIn = (token: string | undefined, value: unknown, headers?: Record<string, string>) =>
      t.call('POST', OPTIN, { token, body: { optIn: value }, headers });
    const linkRow = (memberId: string) =>
      t.deps.db.selectFrom('vcs_links').selectAll().where('member_id', '=', memberId).executeTakeFirst();
    const countRows = async () =>
      (
        await t.deps.db
          .selectFrom('leaderboard_counts')
          .selectAll()
          .orderBy('rank')
          .orderBy('member_id')
          .execute()
      ).map((row) => ({ member_id: row.member_id, commits: Number(row.commits), rank: Number(row.rank) }));
    /** Every stored row the leaderboard owns, to prove a call changed none of them. */
    const leaderboardState = async () => ({
      links: await t.deps.db.selectFrom('vcs_links').selectAll().orderBy('member_id').execute(),
      counts: await countRows(),
      weeks: await t.deps.db.selectFrom('leaderboard_weeks').selectAll().execute(),
    });
    async function sessionCookie(member: Member) {
      return `${SESSION_COOKIE}=${await createSession(t.deps.db, t.clock, member.id)}`;
    }

    test('opting in without a linked account is 409 no_vcs_link; opting out always works', async () => {
      const member = await t.member('core', 'Unlinked');
      const token = await t.token(member, ['leaderboard:manage']);
      const refused = await optIn(token, true);
      assert.equal(refused.status, 409, refused.text);
      assert.equal(refused.body.error, 'no_vcs_link');
      assert.equal(refused.body.error_kind, 'no_vcs_link');
      assert.equal(refused.body.link_url, `${t.baseUrl}/leaderboard/link`);
      assert.equal(await linkRow(member.id), undefined, 'nothing stored');

      const out = await optIn(token, false);
      assert.equal(out.status, 200, out.text);
      assert.deepEqual(out.body, { ok: true, optIn: false, vcs_username: null, via: 'agent' });
      assert.equal(await linkRow(member.id), undefined);

      const me = await t.call('GET', ME, { token });
      assert.equal(me.status, 200, me.text);
      assert.deepEqual(me.body, {
        ok: true,
        optIn: false,
        vcs_username: null,
        vcs_verified_at: null,
        vcs_link_source: null,
        private_counting: false,
        this_week: null,
        via: 'agent',
      });
    });

    test('a linked member opts in with a token and out with a browser session', async () => {
      const { member, login, token } = await linked('Lin');
      const linkedAt = new Date(t.clock.now()).toISOString();
      t.clock.advance(1000);
      const joined = await optIn(token, true);
      assert.equal(joined.status, 200, joined.text);
      assert.deepEqual(joined.body, { ok: true, optIn: true, vcs_username: login, via: 'agent' });
      assert.equal(Number((await linkRow(member.id))!.opted_in), 1);
      assert.equal(Number((await linkRow(member.id))!.updated_at), t.clock.now());

      const me = await t.call('GET', ME, { token });
      assert.deepEqual(me.body, {
        ok: true,
        optIn: true,
        vcs_username: login,
        vcs_verified_at: linkedAt,
        vcs_link_source: 'token',
        private_counting: false,
        this_week: null,
        via: 'agent',
      });

      const cookie = await sessionCookie(member);
      const left = await optIn(undefined, false, { cookie });
      assert.equal(left.status, 200, left.text);
      assert.deepEqual(left.body, { ok: true, optIn: false, vcs_username: login, via: 'session' });
      assert.equal(Number((await linkRow(member.id))!.opted_in), 0);
      const meBySession = await t.call('GET', ME, { headers: { cookie } });
      assert.equal(meBySession.body.optIn, false);
      assert.equal(meBySession.body.via, 'session');
    });

    test('the job counts opted-in members through the host and ranks them', async () => {
      const ada = await linked('Ada', { optIn: true });
      const bob = await linked('Bob', { optIn: true });
      const cy = await linked('Cy', { optIn: true });
      const idle = await linked('Idle');
      host.commits.set(ada.login, 5).set(bob.login, 12).set(cy.login, 5).set(idle.login, 99);

      const before = await t.call('GET', BOARD);
      assert.equal(before.status, 200, before.text);
      assert.deepEqual(before.body, {
        ok: true,
        generated_at: null,
        week: WEEK,
        total: 0,
        stale: true,
        members: [],
      });

      const report = await refreshLeaderboard(t.deps);
      assert.equal(report.counted, 3);
      assert.equal(report.failed, 0);
      const searches = host.seen('/api/v3/search/commits');
      assert.equal(searches.length, 3, 'members who did not opt in are never looked up');
      assert.ok(searches.every((s) => s.headers.authorization === `Bearer ${SERVICE_TOKEN}`));
      assert.deepEqual(
        searches.map((s) => s.query.get('q')).sort(),
        [ada, bob, cy]
          .map((m) => `author:${m.login} author-date:2026-07-13T00:00:00Z..2026-07-19T23:59:59Z`)
          .sort(),
      );

      const board = await t.call('GET', BOARD);
      assert.deepEqual(board.body, {
        ok: true,
        generated_at: new Date(t.clock.now()).toISOString(),
        week: WEEK,
        total: 3,
        stale: false,
        members: [
          { rank: 1, handle: bob.member.handle, name: 'Bob', commits: 12 },
          { rank: 2, handle: ada.member.handle, name: 'Ada', commits: 5 },
          { rank: 2, handle: cy.member.handle, name: 'Cy', commits: 5 },
        ],
      });
      assert.deepEqual(await countRows(), [
        { member_id: bob.member.id, commits: 12, rank: 1 },
        ...[
          { member_id: ada.member.id, commits: 5, rank: 2 },
          { member_id: cy.member.id, commits: 5, rank: 2 },
        ].sort((a, b) => a.member_id.localeCompare(b.member_id)),
      ]);
      const limited = await t.call('GET', `${BOARD}?limit=1`);
      assert.equal(limited.body.total, 3);
      assert.equal(limited.body.members.length, 1);

      const me = await t.call('GET', ME, { token: ada.token });
      assert.deepEqual(me.body.this_week, {
        count: 5,
        rank: 2,
        total: 3,
        generated_at: new Date(t.clock.now()).toISOString(),
      });

      // Opting out leaves the board at once, and the others move up.
      assert.equal((await optIn(bob.token, false)).status, 200);
      const after = await t.call('GET', BOARD);
      assert.deepEqual(
        after.body.members.map((m: { handle: string; rank: number }) => [m.handle, m.rank]),
        [
          [ada.member.handle, 1],
          [cy.member.handle, 1],
        ],
      );
      assert.equal((await t.call('GET', ME, { token: bob.token })).body.this_week, null);

      // The board is per ISO week: next Monday starts empty until the job runs.
      t.clock.advance(4 * 86_400_000);
      const nextWeek = await t.call('GET', BOARD);
      assert.equal(nextWeek.body.week.from, '2026-07-20T00:00:00.000Z');
      assert.equal(nextWeek.body.total, 0);
      assert.equal(nextWeek.body.stale, true);
    });

    test('a host failing with 500, a rate limit or silence: the job survives and the board is stale', async () => {
      const ada = await linked('Ada', { optIn: true });
      const bob = await linked('Bob', { optIn: true });
      const cy = await linked('Cy', { optIn: true });
      host.commits.set(ada.login, 3).set(bob.login, 2).set(cy.login, 1);
      await refreshLeaderboard(t.deps);
      assert.equal((await t.call('GET', BOARD)).body.stale, false);

      // One member's search fails with a 500, another's never answers: the rest are still counted.
      host.commits.set(ada.login, 4).set(bob.login, 7).set(cy.login, 8);
      host.searchFailures.set(ada.login, { status: 500, body: { message: 'Server Error' } });
      host.searchFailures.set(cy.login, 'hang');
      t.clock.advance(60_000);
      const partial = await refreshLeaderboard(t.deps);
      assert.deepEqual([partial.counted, partial.failed, partial.stoppedBy], [1, 2, undefined]);
      const stale = await t.call('GET', BOARD);
      assert.equal(stale.body.stale, true);
      assert.equal(stale.body.generated_at, new Date(t.clock.now()).toISOString());
      assert.deepEqual(
        stale.body.members.map((m: { name: string; commits: number }) => [m.name, m.commits]),
        [
          ['Bob', 7],
          ['Ada', 3],
          ['Cy', 1],
        ],
        'the failed members keep their previous counts',
      );

      // A rate limit (GitHub's 403 with x-ratelimit-remaining: 0) stops the run at the first refusal.
      host.searchFailures.clear();
      host.searchFailures.set('*', {
        status: 403,
        headers: { 'x-ratelimit-remaining': '0', 'retry-after': '42' },
        body: { message: 'API rate limit exceeded' },
      });
      host.requests.length = 0;
      const stored = await countRows();
      const limited = await refreshLeaderboard(t.deps);
      assert.equal(limited.stoppedBy, 'rate_limited');
      assert.equal(limited.retryAfterSeconds, 42);
      assert.deepEqual([limited.counted, limited.failed], [0, 3]);
      assert.equal(host.seen('/api/v3/search/commits').length, 1, 'no request after the rate limit');
      assert.deepEqual(await countRows(), stored, 'counts unchanged');
      assert.equal((await t.call('GET', BOARD)).body.stale, true);

      // The host comes back: the next run is complete and the board fresh again.
      host.searchFailures.clear();
      const recovered = await refreshLeaderboard(t.deps);
      assert.deepEqual([recovered.counted, recovered.failed], [3, 0]);
      const fresh = await t.call('GET', BOARD);
      assert.equal(fresh.body.stale, false);
      assert.deepEqual(
        fresh.body.members.map((m: { name: string; commits: number }) => [m.name, m.commits]),
        [
          ['Cy', 8],
          ['Bob', 7],
          ['Ada', 4],
        ],
      );
      // A board nobody refreshed for two intervals is stale too.
      t.clock.advance(2 * 60 * 60_000 + 1);
      assert.equal((await t.call('GET', BOARD)).body.stale, true);
    });

    // Real short delays rather than mocked timers: mocking setTimeout also mocks the HTTP client's own
    // timers, which then fire for connections of earlier tests.
    test('the serve timer runs the job after the first delay and every interval; a failing host is logged, not thrown', async () => {
      const ada = await linked('Ada', { optIn: true });
      host.commits.set(ada.login, 2);
      const logged: string[] = [];
      let waiting: { message: string; resolve: () => void } | undefined;
      const lineSaying = (message: string) =>
        new Promise<void>((resolve) => (waiting = { message, resolve }));
      const record = (_details: object, message: string) => {
        logged.push(message);
        if (waiting?.message === message) waiting.resolve();
      };
      const refreshed = lineSaying('leaderboard refreshed');
      const startedAt = Date.now();
      const stop = scheduleLeaderboardRefresh(
        t.deps,
        { info: record, warn: record },
        { firstRunMs: 100, intervalMs: 500 },
      );
      try {
        await refreshed;
        assert.ok(Date.now() - startedAt >= 90, 'not before the first delay');
        assert.equal(logged[0], 'leaderboard refreshed');
        assert.deepEqual(await countRows(), [{ member_id: ada.member.id, commits: 2, rank: 1 }]);

        host.searchFailures.set('*', { status: 500 });
        // The run claimed the interval (in the database, by the app's clock); the next one claims anew.
        t.clock.advance(500);
        await lineSaying('leaderboard refresh incomplete; the board is marked stale');
        assert.ok(Date.now() - startedAt >= 490, 'the next run comes with the interval');
      } finally {
        stop();
      }
    });

    test('of two instances on one database, one runs each scheduled refresh', async () => {
      const ada = await linked('Ada', { optIn: true });
      const bob = await linked('Bob', { optIn: true });
      host.commits.set(ada.login, 3).set(bob.login, 1);
      const other = await startTestApp({
        database: t.database,
        config: { codeHost: t.deps.config.codeHost },
      });
      other.clock.set(t.clock.now());
      const lines: string[] = [];
      const record = (name: string) => (_details: object, message: string) =>
        lines.push(`${name}: ${message}`);
      const timing = { firstRunMs: 50, intervalMs: 60_000 };
      const stops = [
        scheduleLeaderboardRefresh(t.deps, { info: record('first'), warn: record('first') }, timing),
        scheduleLeaderboardRefresh(other.deps, { info: record('second'), warn: record('second') }, timing),
      ];
      try {
        // Both timers fire: one instance refreshes, the other finds the interval claimed and says so.
        await waitUntil(() => lines.length >= 2, 'both instances to run their timer');
        assert.equal(lines.length, 2, lines.join('; '));
        const [refreshed, leftAlone] = [...lines].sort((a, b) =>
          a.endsWith('leaderboard refreshed') ? -1 : b.endsWith('leaderboard refreshed') ? 1 : 0,
        );
        assert.match(refreshed, /: leaderboard refreshed$/, lines.join('; '));
        assert.match(leftAlone, /: leaderboard refresh left to the instance that claimed this interval$/);
        assert.notEqual(refreshed.split(':')[0], leftAlone.split(':')[0], 'one line from each instance');
        assert.equal(host.seen('/api/v3/search/commits').length, 2, 'each member looked up once');
        assert.deepEqual(
          (await countRows()).map((row) => [row.member_id, row.commits]),
          [
            [ada.member.id, 3],
            [bob.member.id, 1],
          ],
        );
        const lease = await t.deps.db
          .selectFrom('settings')
          .select('value')
          .where('key', '=', 'leaderboard_refresh_lease')
          .executeTakeFirstOrThrow();
        assert.equal(Number(lease.value), t.clock.now() + 54_000, 'the claim lasts 90 % of the interval');
      } finally {
        for (const stop of stops) stop();
        await other.close();
      }
    });

    test('`agent-commons leaderboard refresh` runs the same job from the shell', async () => {
      const ada = await linked('Ada', { optIn: true });
      host.commits.set(ada.login, 6);
      const result = await runCli(t.database.url, ['leaderboard', 'refresh', '--json'], {
        env: { VCS_API_URL: host.apiUrl, VCS_API_TOKEN: SERVICE_TOKEN },
      });
      assert.equal(result.code, 0, result.stderr);
      const summary = JSON.parse(result.stdout);
      assert.equal(summary.counted, 1);
      assert.equal(summary.failed, 0);
      assert.deepEqual(await countRows(), [{ member_id: ada.member.id, commits: 6, rank: 1 }]);

      host.searchFailures.set('*', { status: 502 });
      const failing = await runCli(t.database.url, ['leaderboard', 'refresh'], {
        env: { VCS_API_URL: host.apiUrl },
      });
      assert.equal(failing.code, 2, 'a partial run exits 2, not with a crash');
      assert.match(failing.stdout, /counted 0, failed 1/);
      const failingJson = await runCli(t.database.url, ['leaderboard', 'refresh', '--json'], {
        env: { VCS_API_URL: host.apiUrl },
      });
      assert.equal(failingJson.code, 2, 'with --json too, a partial run exits 2');
      assert.deepEqual((({ counted, failed }) => ({ counted, failed }))(JSON.parse(failingJson.stdout)), {
        counted: 0,
        failed: 1,
      });
    });

    test('a sandbox token gets the receipt, or the refusal live would get, and no row changes', async () => {
      const { member } = await linked('Sandy');
      const sandbox = await t.token(member, ['leaderboard:manage'], { sandbox: true });
      const unlinked = await t.member('core', 'Sandless');
      const unlinkedSandbox = await t.token(unlinked, ['leaderboard:manage'], { sandbox: true });
      const before = await leaderboardState();
      for (const [token, value] of [
        [sandbox, true],
        [sandbox, false],
      ] as const) {
        const response = await optIn(token, value);
        assert.equal(response.status, 200, response.text);
        assert.deepEqual(response.body, {
          ok: true,
          sandbox: true,
          simulated: true,
          would_have: { action: 'leaderboardOptIn', scope: 'leaderboard:manage', args: { optIn: value } },
          note: 'Sandbox token: the call was checked as a live one would be, and nothing was changed.',
        });
      }
      // Refused where the live call would be: opting in needs a linked account, sandbox or not.
      const refused = await optIn(unlinkedSandbox, true);
      assert.equal(refused.status, 409, refused.text);
      assert.equal(refused.body.error, 'no_vcs_link');
      assert.deepEqual(await leaderboardState(), before);
      // Reads are real in the sandbox.
      assert.equal(
        (await t.call('GET', ME, { token: sandbox })).body.vcs_username,
        (await linkRow(member.id))!.username,
      );
    });

    test('scope and tier: member tokens cannot carry leaderboard:manage; demotion and missing scope are 403', async () => {
      const low = await t.member('member', 'Low');
      await assert.rejects(t.token(low, ['leaderboard:manage']), DeniedScopesError);

      const { member, token } = await linked('Demoted');
      const other = await t.token(member, ['membership:read']);
      const before = await leaderboardState();
      const unscoped = await optIn(other, true);
      assert.equal(unscoped.status, 403);
      assert.equal(unscoped.body.error, 'insufficient_scope');
      assert.equal(unscoped.body.ok, false);
      assert.equal(unscoped.body.tier, 'core');
      assert.equal((await t.call('GET', ME, { token: other })).status, 403);

      await setMemberTier(t.deps.db, t.clock, t.deps.tiers, member.id, 'member');
      const demoted = await optIn(token, true);
      assert.equal(demoted.status, 403, demoted.text);
      assert.equal(demoted.body.error, 'tier_insufficient');
      assert.equal(demoted.body.error_kind, 'tier');
      assert.equal(demoted.body.tier, 'member');
      const cookie = await sessionCookie(member);
      assert.equal(
        (await optIn(undefined, true, { cookie })).status,
        403,
        'a session is held to the tier too',
      );
      assert.equal((await t.call('GET', ME, { headers: { cookie } })).status, 403);

      const anonymous = await optIn(undefined, true);
      assert.equal(anonymous.status, 401);
      assert.equal(anonymous.body.error, 'missing_token');
      assert.equal((await t.call('GET', ME)).status, 401);
      assert.deepEqual(await leaderboardState(), before, 'no refusal changed a row');
      assert.equal((await t.call('GET', BOARD)).status, 200, 'the board is public');
    });

    test('bad input is a 4xx in the Error shape and changes nothing', async () => {
      const { token } = await linked('Badin');
      const before = await leaderboardState();
      const cases: [
        string,
        { rawBody?: string; body?: unknown; headers?: Record<string, string> },
        number,
        string,
      ][] = [
        [
          'invalid JSON',
          { rawBody: '{"optIn": tru', headers: { 'content-type': 'application/json' } },
          400,
          'invalid_json',
        ],
        ['a string', { body: { optIn: 'true' } }, 400, 'validation_failed'],
        ['a number', { body: { optIn: 1 } }, 400, 'validation_failed'],
        ['null', { body: { optIn: null } }, 400, 'validation_failed'],
        ['missing', { body: {} }, 400, 'validation_failed'],
        ['unknown field', { body: { optIn: true, handle: 'x' } }, 400, 'validation_failed'],
        ['an array body', { body: [true] }, 400, 'validation_failed'],
        ['oversize', { body: { optIn: true, pad: 'x'.repeat(8 * 1024) } }, 413, 'payload_too_large'],
        [
          'form body',
          { rawBody: 'optIn=true', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
          415,
          'unsupported_media_type',
        ],
      ];
      for (const [label, options, status, error] of cases) {
        const response = await t.call('POST', OPTIN, { token, ...options });
        assert.equal(response.status, status, `${label}: ${response.text}`);
        assert.equal(response.body.error, error, label);
        assert.equal(typeof response.body.error_kind, 'string', label);
        assert.equal(response.body.request_id, response.headers.get('x-request-id'), label);
      }
      for (const path of [
        `${BOARD}?limit=0`,
        `${BOARD}?limit=501`,
        `${BOARD}?limit=ten`,
        `${BOARD}?week=1`,
        `${ME}?x=1`,
      ]) {
        const response = await t.call('GET', path, { token });
        assert.equal(response.status, 400, `${path}: ${response.text}`);
        assert.equal(response.body.error_kind, 'validation');
      }
      assert.deepEqual(await leaderboardState(), before);
    });

    test('opt-in changes are limited per member per hour (429 with Retry-After)', async () => {
      const { token } = await linked('Busy');
      for (let i = 0; i < 6; i++) assert.equal((await optIn(token, i % 2 === 0)).status, 200);
      const limited = await optIn(token, true);
      assert.equal(limited.status, 429, limited.text);
      assert.equal(limited.body.policy, 'leaderboard_optin');
      assert.ok(Number(limited.headers.get('retry-after')) > 0);
    });

    test('MCP and A2A reach the same operations: ic_leaderboard_set_optin and ic_leaderboard_get_board', async () => {
      const { member, login, token } = await linked('Agent');
      const set = await a2a.send('ic_leaderboard_set_optin', { optIn: true }, token);
      assert.equal(set.status, 200, set.text);
      assert.deepEqual(set.body.result, { ok: true, optIn: true, vcs_username: login, via: 'agent' });
      assert.equal(Number((await linkRow(member.id))!.opted_in), 1);
      const board = await a2a.send('ic_leaderboard_get_board', {});
      assert.equal(board.body.result.ok, true);
      assert.deepEqual(board.body.result.week, WEEK);
    });
  });
}
