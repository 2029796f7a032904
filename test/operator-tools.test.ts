import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { readEvents } from '../src/domain/eventlog/eventlog.ts';
import { proposeEvent } from '../src/domain/events/proposals.ts';
import { submitHighlight } from '../src/domain/highlights/highlights.ts';
import type { Member } from '../src/domain/members/members.ts';
import { requestTier } from '../src/domain/members/tier-requests.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';

const ADMIN_SCOPES = [
  'admin:tier_review',
  'admin:highlights_review',
  'admin:events_review',
  'admin:feedback_review',
];

for (const engine of engines) {
  describe(`operator tools over MCP and A2A (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    let operator: Member;
    let token: string;
    const clients: Client[] = [];
    before(async () => {
      t = await startTestApp({ engine: engine.name, limits: { feedbackPerHour: 1000 } });
      operator = await t.member('operator', 'Olga');
      token = await t.token(operator, ADMIN_SCOPES);
    });
    after(async () => {
      await Promise.all(clients.map((c) => c.close()));
      await t?.close();
    });

    async function mcp(bearer: string, name: string, args: Record<string, unknown> = {}) {
      const client = new Client({ name: 'agent-commons-tests', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${t.baseUrl}/api/mcp`), {
          requestInit: { headers: { Authorization: `Bearer ${bearer}` } },
        }),
      );
      clients.push(client);
      const result = await client.callTool({ name, arguments: args });
      return { isError: result.isError, body: result.structuredContent as Record<string, any> };
    }
    const a2a = (capability: string, args: unknown, bearer?: string) =>
      t.call('POST', '/api/a2a', {
        body: { jsonrpc: '2.0', id: 1, method: 'tasks/send', params: { capability, arguments: args } },
        token: bearer,
      });
    const auditRows = (target: string) =>
      t.deps.db.selectFrom('operator_audit').selectAll().where('target', '=', target).execute();
    async function fileTicket(message: string): Promise<string> {
      const filed = await t.call('POST', '/api/agent/feedback', {
        body: { message: `${message}: a report long enough not to draw a warning.`, category: 'bug_report' },
      });
      assert.equal(filed.status, 201, filed.text);
      return filed.body.ticket_id;
    }

    test('tier request: the list, a dry run that changes nothing, then the confirmed, audited decision', async () => {
      const member = await t.member('member', 'Tess');
      const pending = await requestTier(t.deps, member.id, 'resident', 'I run the reading group');
      const list = await mcp(token, 'ic_admin_tier_requests_list');
      assert.equal(list.isError, undefined, JSON.stringify(list.body));
      const listed = list.body.requests.find((r: { id: string }) => r.id === pending.id);
      assert.deepEqual(
        { member_id: listed.member_id, tier: listed.tier, note: listed.note, status: listed.status },
        { member_id: member.id, tier: 'resident', note: 'I run the reading group', status: 'pending' },
      );

      const dry = await mcp(token, 'ic_admin_tier_request_decide', { id: pending.id, decision: 'approve' });
      assert.equal(dry.isError, undefined, JSON.stringify(dry.body));
      assert.deepEqual(dry.body, {
        ok: true,
        dry_run: true,
        applied: false,
        action: 'tier_request.approve',
        target: pending.id,
        record: {
          id: pending.id,
          member_id: member.id,
          tier: 'resident',
          status: 'approved',
          granted_tier: 'resident',
          reason: null,
          member_tier: 'resident',
        },
        rate: { current: 0, remaining: 20, limit: 20 },
      });
      const untouched = await t.deps.db
        .selectFrom('tier_requests')
        .selectAll()
        .where('id', '=', pending.id)
        .executeTakeFirstOrThrow();
      assert.equal(untouched.status, 'pending');
      assert.equal(
        (
          await t.deps.db
            .selectFrom('members')
            .select('tier')
            .where('id', '=', member.id)
            .executeTakeFirstOrThrow()
        ).tier,
        'member',
      );
      assert.deepEqual(await auditRows(pending.id), []);
      assert.equal((await readEvents(t.deps.db, member.id, { since: 0, limit: 50 })).events.length, 0);

      const done = await mcp(token, 'ic_admin_tier_request_decide', {
        id: pending.id,
        decision: 'approve',
        confirm: true,
      });
      assert.equal(done.isError, undefined, JSON.stringify(done.body));
      assert.deepEqual(
        { ...done.body, record: undefined },
        {
          ok: true,
          dry_run: false,
          applied: true,
          action: 'tier_request.approve',
          target: pending.id,
          record: undefined,
          rate: { current: 1, remaining: 19, limit: 20 },
        },
      );
      assert.deepEqual(done.body.record, dry.body.record, 'the dry run said what happened');
      assert.equal(
        (
          await t.deps.db
            .selectFrom('members')
            .select('tier')
            .where('id', '=', member.id)
            .executeTakeFirstOrThrow()
        ).tier,
        'resident',
      );
      const [audit] = await auditRows(pending.id);
      assert.deepEqual(
        {
          operator: audit.operator_id,
          action: audit.action,
          outcome: audit.outcome,
          detail: JSON.parse(audit.detail),
        },
        {
          operator: operator.id,
          action: 'tier_request.approve',
          outcome: 'done',
          detail: { via: 'agent', surface: 'mcp' },
        },
      );
      const log = await readEvents(t.deps.db, member.id, { since: 0, limit: 50 });
      assert.deepEqual(
        log.events.map((e) => e.type),
        ['tier_approved'],
      );

      const again = await mcp(token, 'ic_admin_tier_request_decide', {
        id: pending.id,
        decision: 'deny',
        confirm: true,
      });
      assert.equal(again.isError, true);
      assert.equal(again.body.error, 'already_decided');
      assert.equal(again.body.error_kind, 'conflict');
      assert.deepEqual(
        (await auditRows(pending.id)).map((row) => row.outcome),
        ['done', 'not_pending'],
      );
      const dryUnknown = await mcp(token, 'ic_admin_tier_request_decide', {
        id: 'treq_nope',
        decision: 'deny',
      });
      assert.equal(dryUnknown.body.error_kind, 'not_found');
    });

    test('highlights, event proposals and feedback: dry run, then confirm', async () => {
      const author = await t.member('core', 'Hal');
      const storyId = `2026-07-16-hal-${Math.random().toString(36).slice(2, 8)}`;
      await submitHighlight(t.deps, {
        story: { id: storyId, dek: 'A night.' },
        memberId: author.id,
        tokenId: 'tok_test',
      });
      const listed = await mcp(token, 'ic_admin_highlights_list');
      assert.deepEqual(listed.body.highlights.find((h: { id: string }) => h.id === storyId).story, {
        id: storyId,
        dek: 'A night.',
      });
      const dry = await mcp(token, 'ic_admin_highlight_decide', { id: storyId, decision: 'approve' });
      assert.equal(dry.body.record.status, 'active');
      const row = () =>
        t.deps.db
          .selectFrom('highlights')
          .select('status')
          .where('id', '=', storyId)
          .executeTakeFirstOrThrow();
      assert.equal((await row()).status, 'pending');
      const done = await mcp(token, 'ic_admin_highlight_decide', {
        id: storyId,
        decision: 'approve',
        confirm: true,
      });
      assert.equal(done.body.applied, true, JSON.stringify(done.body));
      assert.equal((await row()).status, 'active');

      const proposal = await proposeEvent(t.deps, author.id, null, {
        title: 'Soldering 101',
        start: new Date(t.clock.now() + 86_400_000).toISOString(),
      });
      const requests = await a2a('ic_admin_event_requests_list', {}, token);
      assert.equal(requests.body.result.requests[0].id, proposal.id, requests.text);
      const declined = await a2a(
        'ic_admin_event_request_decide',
        { id: proposal.id, decision: 'decline', reason: 'Full month', confirm: true },
        token,
      );
      assert.equal(declined.body.result.record.status, 'declined', declined.text);
      const stored = await t.deps.db
        .selectFrom('event_requests')
        .selectAll()
        .where('id', '=', proposal.id)
        .executeTakeFirstOrThrow();
      assert.deepEqual(
        [stored.status, stored.reason, stored.decided_by],
        ['declined', 'Full month', operator.id],
      );
      assert.equal((await auditRows(proposal.id))[0].action, 'event_request.decline');

      const ticket = await fileTicket('The feed is late');
      const tickets = await mcp(token, 'ic_admin_feedback_list');
      const shown = tickets.body.tickets.find((x: { ticket_id: string }) => x.ticket_id === ticket);
      assert.equal(shown.status, 'open');
      assert.equal(shown.ip_hash, undefined, 'the IP hash is not shown');
      await mcp(token, 'ic_admin_feedback_resolve', { ticket_id: ticket });
      const status = () =>
        t.deps.db
          .selectFrom('feedback')
          .select('status')
          .where('ticket_id', '=', ticket)
          .executeTakeFirstOrThrow();
      assert.equal((await status()).status, 'open');
      const resolved = await mcp(token, 'ic_admin_feedback_resolve', { ticket_id: ticket, confirm: true });
      assert.equal(resolved.body.record.status, 'resolved');
      assert.equal((await status()).status, 'resolved');
    });

    test('refusals: no token, no scope, a sandbox token', async () => {
      const anonymous = await a2a('ic_admin_feedback_list', {});
      assert.equal(anonymous.status, 401, anonymous.text);
      assert.equal(anonymous.body.error.code, -31401);
      const narrow = await t.token(operator, ['admin:feedback_review']);
      const forbidden = await mcp(narrow, 'ic_admin_tier_requests_list');
      assert.equal(forbidden.isError, true);
      assert.equal(forbidden.body.error_kind, 'insufficient_scope');
      assert.equal(forbidden.body.required_scope, 'admin:tier_review');
      const member = await t.member('member', 'Mo');
      const memberToken = await t.token(member, ['membership:read']);
      assert.equal((await mcp(memberToken, 'ic_admin_feedback_list')).body.error_kind, 'insufficient_scope');

      const ticket = await fileTicket('Sandbox should not resolve this');
      const sandbox = await t.token(operator, ADMIN_SCOPES, { sandbox: true });
      const simulated = await mcp(sandbox, 'ic_admin_feedback_resolve', { ticket_id: ticket, confirm: true });
      assert.equal(simulated.body.simulated, true, JSON.stringify(simulated.body));
      assert.equal(simulated.body.would_have.action, 'adminResolveFeedback');
      const stored = await t.deps.db
        .selectFrom('feedback')
        .select('status')
        .where('ticket_id', '=', ticket)
        .executeTakeFirstOrThrow();
      assert.equal(stored.status, 'open');
      assert.deepEqual(await auditRows(ticket), []);
      assert.equal(
        (await mcp(sandbox, 'ic_admin_feedback_list')).body.ok,
        true,
        'sandbox tokens read for real',
      );
    });

    test('the 21st confirmed mutation of the UTC day is refused; dry runs stay free', async () => {
      const quotaToken = await t.token(operator, ['admin:feedback_review']);
      const tickets: string[] = [];
      for (let i = 0; i < 21; i += 1) tickets.push(await fileTicket(`Quota ticket ${i}`));
      for (const [i, ticket] of tickets.slice(0, 20).entries()) {
        const done = await mcp(quotaToken, 'ic_admin_feedback_resolve', { ticket_id: ticket, confirm: true });
        assert.deepEqual(
          done.body.rate,
          { current: i + 1, remaining: 19 - i, limit: 20 },
          JSON.stringify(done.body),
        );
      }
      const last = tickets[20];
      const dry = await mcp(quotaToken, 'ic_admin_feedback_resolve', { ticket_id: last });
      assert.equal(dry.body.dry_run, true, 'a dry run is not refused when the quota is spent');
      assert.deepEqual(dry.body.rate, { current: 20, remaining: 0, limit: 20 });
      const refused = await mcp(quotaToken, 'ic_admin_feedback_resolve', { ticket_id: last, confirm: true });
      assert.equal(refused.isError, true);
      assert.equal(refused.body.error, 'rate_limited');
      assert.equal(refused.body.error_kind, 'rate_limit');
      assert.deepEqual(refused.body.rate, { current: 20, remaining: 0, limit: 20 });
      assert.equal(refused.body.policy, 'operator_mutations');
      assert.ok(refused.body.retry_after_seconds > 0);
      const stored = await t.deps.db
        .selectFrom('feedback')
        .select('status')
        .where('ticket_id', '=', last)
        .executeTakeFirstOrThrow();
      assert.equal(stored.status, 'open', 'the refused mutation rolled back');
      assert.deepEqual(await auditRows(last), [], 'and left no audit row');
      const viaA2a = await a2a('ic_admin_feedback_resolve', { ticket_id: last, confirm: true }, quotaToken);
      assert.equal(viaA2a.body.error.code, -31429);
      assert.equal(viaA2a.body.error.data.error_kind, 'rate_limit');
      assert.ok(viaA2a.body.error.data.retry_after_seconds > 0);
      assert.match(viaA2a.headers.get('ratelimit-policy') ?? '', /"operator_mutations";q=20/);
      const other = await mcp(token, 'ic_admin_feedback_resolve', { ticket_id: last, confirm: true });
      assert.equal(other.body.applied, true, 'the quota is per token');
    });
  });
}
