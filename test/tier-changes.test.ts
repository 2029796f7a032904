// Every tier change, from any path, reaches the member (tier history and event log) and the operator
// audit: the CLI's set-tier and tier decisions, and the operator console's tier form.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { a2aClient } from './support/a2a.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { signInThroughOutbox } from './support/browser.ts';
import { engines } from './support/databases.ts';
import { killAllChildren, runCli } from './support/processes.ts';

for (const engine of engines) {
  describe(`tier changes are audited and reach the member (${engine.name})`, {
    skip: engine.skip,
    concurrency: 1,
  }, () => {
    let t: TestApp;
    const { send } = a2aClient(() => t);
    before(async () => {
      t = await startTestApp({ engine: engine.name });
    });
    after(async () => {
      await killAllChildren();
      await t?.close();
    });

    const storedTier = async (memberId: string) =>
      (
        await t.deps.db
          .selectFrom('members')
          .select('tier')
          .where('id', '=', memberId)
          .executeTakeFirstOrThrow()
      ).tier;
    const tierHistory = (memberId: string) =>
      t.deps.db
        .selectFrom('tier_requests')
        .selectAll()
        .where('member_id', '=', memberId)
        .orderBy('created_at')
        .execute();
    const audits = (target: string) =>
      t.deps.db.selectFrom('operator_audit').selectAll().where('target', '=', target).orderBy('at').execute();

    test('CLI set-tier: demotion and promotion land in history, event log and audit; the agent sees why', async () => {
      const olga = await t.member('operator', 'Olga');
      const member = await t.member('resident', 'Rhea');
      const token = await t.token(member, ['membership:read', 'resources:read']);

      const demoted = await runCli(t.database.url, [
        'member',
        'set-tier',
        member.id,
        'member',
        '--by',
        olga.id,
        '--reason',
        'lapsed dues',
      ]);
      assert.equal(demoted.code, 0, demoted.stderr);
      assert.equal(demoted.stdout, `${member.id} is now member\n`);
      const promoted = await runCli(t.database.url, [
        'member',
        'set-tier',
        member.id,
        'resident',
        '--by',
        olga.email,
      ]);
      assert.equal(promoted.code, 0, promoted.stderr);

      // Stored state: the tier, two history rows, two audit rows.
      assert.equal(await storedTier(member.id), 'resident');
      const history = await tierHistory(member.id);
      assert.deepEqual(
        history.map((h) => [h.status, h.granted_tier, h.decided_by, h.reason]),
        [
          ['changed', 'member', olga.id, 'lapsed dues'],
          ['changed', 'resident', olga.id, null],
        ],
      );
      const audit = await audits(member.id);
      assert.deepEqual(
        audit.map((a) => [a.operator_id, a.action, a.outcome, JSON.parse(a.detail).tier]),
        [
          [olga.id, 'member.set_tier', 'done', 'member'],
          [olga.id, 'member.set_tier', 'done', 'resident'],
        ],
      );

      // On the wire: the member's agent reads the changes in its event log and its tier history.
      const events = await send('ic_events_next', { types: ['tier_changed'] }, token);
      assert.equal(events.status, 200, events.text);
      assert.equal(events.body.error, undefined, events.text);
      const changes = events.body.result.events;
      assert.deepEqual(
        changes.map(
          (e: { type: string; payload: Record<string, unknown>; actor: Record<string, unknown> }) => [
            e.type,
            e.payload.from,
            e.payload.to,
            e.payload.reason,
            e.actor.name,
          ],
        ),
        [
          ['tier_changed', 'resident', 'member', 'lapsed dues', olga.id],
          ['tier_changed', 'member', 'resident', null, olga.id],
        ],
      );
      const membership = await send('ic_get_my_membership', {}, token);
      assert.equal(membership.body.error, undefined, membership.text);
      assert.equal(membership.body.result.tier, 'resident');
      assert.deepEqual(
        membership.body.result.history
          .map((h: { status: string; granted_tier: string }) => `${h.status}:${h.granted_tier}`)
          .sort(),
        ['changed:member', 'changed:resident'],
      );
    });

    test('CLI set-tier to an unknown tier or member changes nothing and writes a refused audit row', async () => {
      const olga = await t.member('operator', 'Olga');
      const member = await t.member('member');
      const unknown = await runCli(t.database.url, [
        'member',
        'set-tier',
        member.id,
        'royalty',
        '--by',
        olga.id,
      ]);
      assert.equal(unknown.code, 1);
      assert.match(unknown.stderr, /unknown tier "royalty"/i);
      assert.equal(await storedTier(member.id), 'member');
      assert.deepEqual(await tierHistory(member.id), []);
      const audit = await audits(member.id);
      assert.equal(audit.length, 1);
      assert.match(audit[0].outcome, /unknown tier/);
    });

    test('CLI tier approve writes its audit row beside the decision', async () => {
      const olga = await t.member('operator', 'Olga');
      const member = await t.member('public');
      const token = await t.token(member, ['membership:write']);
      const asked = await send('ic_request_tier', { tier: 'member', note: 'hello' }, token);
      assert.equal(asked.body.error, undefined, asked.text);
      const requestId = asked.body.result.pending.id;
      assert.ok(requestId, asked.text);
      const approved = await runCli(t.database.url, ['tier', 'approve', requestId, '--by', olga.id]);
      assert.equal(approved.code, 0, approved.stderr);
      const audit = await audits(requestId);
      assert.deepEqual(
        audit.map((a) => [a.operator_id, a.action, a.outcome]),
        [[olga.id, 'tier_request.approve', 'done']],
      );
      assert.equal(await storedTier(member.id), 'member');
    });

    test('the operator console tier form: audit row, history and event log', async () => {
      const operator = await t.member('operator', 'Olga');
      const member = await t.member('resident');
      const browser = await signInThroughOutbox(t, operator.email);
      const page = await browser.request('POST', '/operator/members/tier', {
        id: member.id,
        tier: 'member',
        csrf: browser.csrf,
      });
      assert.equal(page.status, 200, page.text);
      assert.match(page.text, /Tier set to member/);
      const audit = await audits(member.id);
      assert.deepEqual(
        audit.map((a) => [a.operator_id, a.action, a.outcome]),
        [[operator.id, 'member.set_tier', 'done']],
      );
      const events = await t.deps.db
        .selectFrom('event_log')
        .selectAll()
        .where('recipient_id', '=', member.id)
        .execute();
      assert.deepEqual(
        events.map((e) => e.type),
        ['tier_changed'],
      );
      const history = await tierHistory(member.id);
      assert.deepEqual(
        history.map((h) => [h.status, h.granted_tier, h.decided_by]),
        [['changed', 'member', operator.id]],
      );
    });
  });
}
