// One door per action: every operator decision, whether it comes from the console (a real
// form POST with a real session cookie), the CLI (bin/agent-commons.js), MCP or A2A, runs the same
// registry operation. Each door is asserted on the wire and in the stored state: the decision, one
// audit row of the same shape naming its surface, and the member's event-log record.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { proposeEvent } from '../src/domain/events/proposals.ts';
import { submitHighlight } from '../src/domain/highlights/highlights.ts';
import type { Member } from '../src/domain/members/members.ts';
import { requestTier } from '../src/domain/members/tier-requests.ts';
import { a2aClient } from './support/a2a.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { Browser, signInThroughOutbox } from './support/browser.ts';
import { engines } from './support/databases.ts';
import { killAllChildren, runCli } from './support/processes.ts';

const ADMIN_SCOPES = [
  'admin:tier_review',
  'admin:highlights_review',
  'admin:events_review',
  'admin:feedback_review',
];
const DOORS = ['web', 'cli', 'mcp', 'a2a'] as const;
type Door = (typeof DOORS)[number];

/** A record waiting for a decision: its id, and the member whose event log hears of it (if any). */
interface Pending {
  target: string;
  memberId?: string;
}

/** One operator action as each door asks for it, and what it leaves behind. */
interface Action {
  action: string;
  tool: string;
  setup(t: TestApp): Promise<Pending>;
  args(target: string): Record<string, unknown>;
  form: { path: string; fields(target: string): Record<string, string>; done: RegExp };
  cli(target: string): string[];
  /** The decided record's state, read from the database. */
  stored(t: TestApp, target: string): Promise<unknown>;
  expected: unknown;
  /** The event-log record the member gets; none for feedback (a ticket has no member). */
  event?: string;
}

const column = async (t: TestApp, table: 'tier_requests' | 'highlights' | 'event_requests', id: string) =>
  (await t.deps.db.selectFrom(table).select('status').where('id', '=', id).executeTakeFirstOrThrow()).status;

let serial = 0;
const tierRequest = async (t: TestApp): Promise<Pending> => {
  const member = await t.member('member');
  const asked = await requestTier(t.deps, member.id, 'resident', 'I run the reading group');
  return { target: asked.id, memberId: member.id };
};
const highlight = async (t: TestApp): Promise<Pending> => {
  const author = await t.member('core');
  const id = `2026-07-16-door-${++serial}-${Math.random().toString(36).slice(2, 8)}`;
  await submitHighlight(t.deps, { story: { id, dek: 'A night.' }, memberId: author.id, tokenId: 'tok_test' });
  return { target: id, memberId: author.id };
};
const proposal = async (t: TestApp): Promise<Pending> => {
  const author = await t.member('core');
  const filed = await proposeEvent(t.deps, author.id, null, {
    title: `Soldering ${++serial}`,
    start: new Date(Date.now() + 5 * 86_400_000).toISOString(),
  });
  return { target: filed.id, memberId: author.id };
};

const ACTIONS: Action[] = [
  {
    action: 'tier_request.approve',
    tool: 'ic_admin_tier_request_decide',
    setup: tierRequest,
    args: (id) => ({ id, decision: 'approve' }),
    form: {
      path: '/operator/tier-requests/decide',
      fields: (id) => ({ id, decision: 'approve', tier: 'resident' }),
      done: /Decided\./,
    },
    cli: (id) => ['tier', 'approve', id],
    stored: (t, id) => column(t, 'tier_requests', id),
    expected: 'approved',
    event: 'tier_approved',
  },
  {
    action: 'tier_request.deny',
    tool: 'ic_admin_tier_request_decide',
    setup: tierRequest,
    args: (id) => ({ id, decision: 'deny', reason: 'Not this season' }),
    form: {
      path: '/operator/tier-requests/decide',
      fields: (id) => ({ id, decision: 'deny', reason: 'Not this season' }),
      done: /Decided\./,
    },
    cli: (id) => ['tier', 'deny', id, '--reason', 'Not this season'],
    stored: (t, id) => column(t, 'tier_requests', id),
    expected: 'denied',
    event: 'tier_denied',
  },
  {
    action: 'highlight.approve',
    tool: 'ic_admin_highlight_decide',
    setup: highlight,
    args: (id) => ({ id, decision: 'approve' }),
    form: {
      path: '/operator/highlights/decide',
      fields: (id) => ({ id, decision: 'approve' }),
      done: /Decided\./,
    },
    cli: (id) => ['highlights', 'approve', id],
    stored: (t, id) => column(t, 'highlights', id),
    expected: 'active',
    event: 'highlight_approved',
  },
  {
    action: 'highlight.reject',
    tool: 'ic_admin_highlight_decide',
    setup: highlight,
    args: (id) => ({ id, decision: 'reject' }),
    form: {
      path: '/operator/highlights/decide',
      fields: (id) => ({ id, decision: 'reject' }),
      done: /Decided\./,
    },
    cli: (id) => ['highlights', 'reject', id],
    stored: (t, id) => column(t, 'highlights', id),
    expected: 'rejected',
    event: 'highlight_rejected',
  },
  {
    action: 'event_request.approve',
    tool: 'ic_admin_event_request_decide',
    setup: proposal,
    args: (id) => ({ id, decision: 'approve' }),
    form: {
      path: '/operator/event-requests/decide',
      fields: (id) => ({ id, decision: 'approve' }),
      done: /Approved and published\./,
    },
    cli: (id) => ['event-requests', 'approve', id],
    stored: (t, id) => column(t, 'event_requests', id),
    expected: 'approved',
    event: 'event_request_approved',
  },
  {
    action: 'event_request.decline',
    tool: 'ic_admin_event_request_decide',
    setup: proposal,
    args: (id) => ({ id, decision: 'decline', reason: 'Full month' }),
    form: {
      path: '/operator/event-requests/decide',
      fields: (id) => ({ id, decision: 'decline', reason: 'Full month' }),
      done: /Declined\./,
    },
    cli: (id) => ['event-requests', 'decline', id, '--reason', 'Full month'],
    stored: (t, id) => column(t, 'event_requests', id),
    expected: 'declined',
    event: 'event_request_declined',
  },
  {
    action: 'feedback.resolve',
    tool: 'ic_admin_feedback_resolve',
    async setup(t) {
      const filed = await t.call('POST', '/api/agent/feedback', {
        body: {
          message: 'The map page is blank: a report long enough not to draw a warning.',
          category: 'bug_report',
        },
      });
      assert.equal(filed.status, 201, filed.text);
      return { target: filed.body.ticket_id };
    },
    args: (ticket_id) => ({ ticket_id }),
    form: { path: '/operator/feedback/resolve', fields: (ticket_id) => ({ ticket_id }), done: /Resolved\./ },
    cli: () => [],
    stored: async (t, id) =>
      (
        await t.deps.db
          .selectFrom('feedback')
          .select('status')
          .where('ticket_id', '=', id)
          .executeTakeFirstOrThrow()
      ).status,
    expected: 'resolved',
  },
  {
    action: 'member.set_tier',
    tool: 'ic_admin_member_set_tier',
    async setup(t) {
      const member = await t.member('member');
      return { target: member.id, memberId: member.id };
    },
    args: (member_id) => ({ member_id, tier: 'resident' }),
    form: {
      path: '/operator/members/tier',
      fields: (id) => ({ id, tier: 'resident' }),
      done: /Tier set to resident\./,
    },
    cli: (id) => ['member', 'set-tier', id, 'resident'],
    stored: async (t, id) =>
      (await t.deps.db.selectFrom('members').select('tier').where('id', '=', id).executeTakeFirstOrThrow())
        .tier,
    expected: 'resident',
    event: 'tier_changed',
  },
  {
    action: 'member.invite',
    tool: 'ic_admin_member_invite',
    setup: async () => ({
      target: `invited-${++serial}-${Math.random().toString(36).slice(2, 8)}@example.org`,
    }),
    args: (email) => ({ email, name: 'Nora New', tier: 'member' }),
    form: {
      path: '/operator/members/invite',
      fields: (email) => ({ email, name: 'Nora New', tier: 'member' }),
      done: /Invited invited-.*: they can sign in now\./,
    },
    cli: () => [],
    stored: async (t, email) =>
      (await t.deps.db.selectFrom('members').select('tier').where('email', '=', email).executeTakeFirst())
        ?.tier,
    expected: 'member',
  },
];

for (const engine of engines) {
  describe(`one door per operator action (${engine.name})`, { skip: engine.skip, concurrency: 1 }, () => {
    let t: TestApp;
    let operator: Member;
    let token: string;
    let browser: Browser;
    const { send } = a2aClient(() => t);
    before(async () => {
      // Generous limits: this file alone makes more decisions than one operator's day allows.
      t = await startTestApp({
        engine: engine.name,
        limits: { operatorMutationsPerDay: 1000, feedbackPerHour: 1000, highlightsPerDay: 1000 },
      });
      // The CLI runs on the wall clock: the server's starts there too, so windows and expiries agree.
      t.clock.set(Date.now());
      operator = await t.member('operator', 'Olga');
      token = await t.token(operator, ADMIN_SCOPES);
      browser = await signInThroughOutbox(t, operator.email);
    });
    after(async () => {
      await killAllChildren();
      await t?.close();
    });

    async function mcpTool(name: string, args: unknown) {
      const response = await fetch(`${t.baseUrl}/api/mcp`, {
        method: 'POST',
        headers: {
          accept: 'application/json, text/event-stream',
          'content-type': 'application/json',
          authorization: `Bearer ${token}`,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name, arguments: args },
        }),
      });
      const text = await response.text();
      return { status: response.status, text, body: JSON.parse(text) };
    }

    /** Runs the action through one door and checks that door's own answer. */
    async function through(door: Door, action: Action, target: string): Promise<void> {
      if (door === 'web') {
        const page = await browser.request('POST', action.form.path, {
          ...action.form.fields(target),
          csrf: browser.csrf,
        });
        assert.equal(page.status, 200, page.text);
        assert.match(page.text, action.form.done);
      } else if (door === 'cli') {
        const run = await runCli(t.database.url, [...action.cli(target), '--by', operator.id]);
        assert.equal(run.code, 0, run.stderr);
        assert.match(run.stdout, new RegExp(target.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
      } else {
        const args = { ...action.args(target), confirm: true };
        const answer =
          door === 'mcp' ? await mcpTool(action.tool, args) : await send(action.tool, args, token);
        assert.equal(answer.status, 200, answer.text);
        const result = door === 'mcp' ? answer.body.result.structuredContent : answer.body.result;
        assert.ok(result, answer.text);
        assert.deepEqual(
          {
            ok: result.ok,
            dry_run: result.dry_run,
            applied: result.applied,
            action: result.action,
            target: result.target,
          },
          { ok: true, dry_run: false, applied: true, action: action.action, target },
        );
      }
    }

    for (const action of ACTIONS) {
      for (const door of DOORS) {
        // Feedback triage and invitations have no CLI command (`member create` bootstraps without an operator).
        if (door === 'cli' && action.cli('x').length === 0) continue;
        test(`${action.action} through ${door}`, async () => {
          const { target, memberId } = await action.setup(t);
          await through(door, action, target);

          assert.equal(await action.stored(t, target), action.expected, 'the decision is stored');
          const audit = await t.deps.db
            .selectFrom('operator_audit')
            .selectAll()
            .where('target', '=', target)
            .execute();
          assert.equal(audit.length, 1, 'one audit row, whatever the door');
          const detail = JSON.parse(audit[0].detail);
          assert.deepEqual(
            {
              operator: audit[0].operator_id,
              action: audit[0].action,
              outcome: audit[0].outcome,
              surface: detail.surface,
              via: detail.via,
            },
            {
              operator: operator.id,
              action: action.action,
              outcome: 'done',
              surface: door,
              via: door === 'web' || door === 'cli' ? 'session' : 'agent',
            },
          );
          if (memberId && action.event) {
            const events = await t.deps.db
              .selectFrom('event_log')
              .select(['type', 'actor'])
              .where('recipient_id', '=', memberId)
              .where('type', '=', action.event)
              .execute();
            assert.equal(events.length, 1, `one ${action.event} record for the member`);
          }
        });
      }
    }

    test('a refused caller changes nothing at any door, and no audit row is written', async () => {
      const member = await t.member('core', 'Cora');
      const memberBrowser = await signInThroughOutbox(t, member.email);
      const memberToken = await t.token(member, ['membership:read']);
      const { target } = await tierRequest(t);

      const page = await memberBrowser.request('POST', '/operator/tier-requests/decide', {
        id: target,
        decision: 'approve',
        csrf: memberBrowser.csrf,
      });
      assert.equal(page.status, 403);
      assert.match(page.text, /Operators only/);
      const anonymous = new Browser(t.baseUrl);
      await anonymous.request('GET', '/signin');
      const signedOut = await anonymous.request('POST', '/operator/tier-requests/decide', {
        id: target,
        decision: 'approve',
        csrf: anonymous.csrf,
      });
      assert.equal(signedOut.status, 303);
      assert.equal(signedOut.headers.get('location'), '/signin');
      const cli = await runCli(t.database.url, ['tier', 'approve', target, '--by', member.id]);
      assert.equal(cli.code, 1);
      assert.match(cli.stderr, /Scope admin:tier_review needs tier operator; the member is on tier core/);
      const viaA2a = await send(
        'ic_admin_tier_request_decide',
        { id: target, decision: 'approve', confirm: true },
        memberToken,
      );
      assert.equal(viaA2a.body.error.data.error_kind, 'insufficient_scope', viaA2a.text);

      assert.equal(await column(t, 'tier_requests', target), 'pending');
      assert.deepEqual(
        await t.deps.db.selectFrom('operator_audit').select('id').where('target', '=', target).execute(),
        [],
      );
    });

    test('agent tokens are charged per UTC day; the console and the CLI are not', async () => {
      const limited = await startTestApp({ engine: engine.name, limits: { operatorMutationsPerDay: 1 } });
      try {
        limited.clock.set(Date.now());
        const olga = await limited.member('operator', 'Olga');
        const consolePage = await signInThroughOutbox(limited, olga.email);
        const requests = [];
        for (let i = 0; i < 4; i++) requests.push(await tierRequest(limited));
        const decide = (id: string) =>
          consolePage.request('POST', '/operator/tier-requests/decide', {
            id,
            decision: 'deny',
            csrf: consolePage.csrf,
          });
        assert.equal((await decide(requests[0].target)).status, 200);
        assert.equal(
          (await decide(requests[1].target)).status,
          200,
          'a person is not held to the agent quota',
        );
        assert.equal(await column(limited, 'tier_requests', requests[1].target), 'denied');
        const cli = await runCli(limited.database.url, ['tier', 'deny', requests[2].target, '--by', olga.id]);
        assert.equal(cli.code, 0, cli.stderr);
        assert.equal(await column(limited, 'tier_requests', requests[2].target), 'denied');
        const quotaRows = await limited.deps.db
          .selectFrom('counters')
          .select('key')
          .where('key', 'like', 'operator_mutations:%')
          .execute();
        assert.deepEqual(quotaRows, [], 'nothing counted for the console or the CLI');
      } finally {
        await limited.close();
      }
    });
  });
}
