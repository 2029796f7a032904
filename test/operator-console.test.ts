import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { requestTier } from '../src/domain/members/tier-requests.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { signInThroughOutbox } from './support/browser.ts';
import { engines } from './support/databases.ts';
import { story } from './support/highlight-story.ts';

const STORY = story('2026-07-16-operator-console-story', { dek: 'Ada gave a <talk> about tidy databases.' });

for (const engine of engines) {
  describe(`operator console (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine: engine.name });
    });
    after(() => t?.close());

    const audit = () => t.deps.db.selectFrom('operator_audit').selectAll().orderBy('at').execute();
    const tierRequest = (id: string) =>
      t.deps.db.selectFrom('tier_requests').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

    test('an operator invites a member, who can then sign in with open sign-up off; refusals change nothing', async () => {
      const closed = await startTestApp({ engine: engine.name, config: { openSignup: false } });
      try {
        const operator = await closed.member('operator', 'Olga');
        const browser = await signInThroughOutbox(closed, operator.email);
        const form = { name: 'Nora <New>', email: 'Nora@Invited.example', tier: 'member' };
        assert.equal(
          (await browser.request('POST', '/operator/members/invite', form)).status,
          403,
          'CSRF checked',
        );
        const invited = await browser.request('POST', '/operator/members/invite', {
          ...form,
          csrf: browser.csrf,
        });
        assert.equal(invited.status, 200);
        assert.match(invited.text, /Invited nora@invited\.example/);
        const row = await closed.deps.db
          .selectFrom('members')
          .select(['name', 'tier'])
          .where('email', '=', 'nora@invited.example')
          .executeTakeFirstOrThrow();
        assert.deepEqual(row, { name: 'Nora <New>', tier: 'member' });
        const again = await browser.request('POST', '/operator/members/invite', {
          ...form,
          csrf: browser.csrf,
        });
        assert.equal(again.status, 409);
        const badTier = await browser.request('POST', '/operator/members/invite', {
          ...form,
          email: 'other@invited.example',
          tier: 'emperor',
          csrf: browser.csrf,
        });
        assert.equal(badTier.status, 400);
        const audit = await closed.deps.db
          .selectFrom('operator_audit')
          .select(['action', 'target', 'outcome'])
          .where('action', '=', 'member.invite')
          .orderBy('at')
          .execute();
        assert.equal(audit.length, 3);
        assert.equal(audit[0].outcome, 'done');
        const member = await signInThroughOutbox(closed, 'nora@invited.example');
        assert.equal((await member.request('GET', '/membership')).status, 200);
        const members = await closed.deps.db.selectFrom('members').select('email').execute();
        assert.ok(!members.some((m) => m.email === 'other@invited.example'));
      } finally {
        await closed.close();
      }
    });

    test('only operators get in', async () => {
      const signedOut = await fetch(`${t.baseUrl}/operator/tier-requests`, { redirect: 'manual' });
      assert.equal(signedOut.status, 303);
      const member = await signInThroughOutbox(t, (await t.member('core')).email);
      assert.equal((await member.request('GET', '/operator/tier-requests')).status, 403);
      assert.equal((await member.request('GET', '/operator/highlights')).status, 403);
    });

    test('tier requests: approve to another tier, deny with a reason, both audited', async () => {
      const operator = await t.member('operator', 'Olga');
      const browser = await signInThroughOutbox(t, operator.email);
      const asker = await t.member('member', 'Mina');
      const asked = await requestTier(t.deps, asker.id, 'core', 'I host the <meetup>');
      const list = await browser.request('GET', '/operator/tier-requests');
      assert.equal(list.status, 200);
      assert.match(list.text, new RegExp(`id="${asked.id}"`));
      assert.match(list.text, /I host the &lt;meetup&gt;/);

      const forged = await browser.request('POST', '/operator/tier-requests/decide', {
        id: asked.id,
        decision: 'approve',
        tier: 'resident',
      });
      assert.equal(forged.status, 403);
      assert.equal((await tierRequest(asked.id)).status, 'pending');

      const approved = await browser.request('POST', '/operator/tier-requests/decide', {
        id: asked.id,
        decision: 'approve',
        tier: 'resident',
        csrf: browser.csrf,
      });
      assert.equal(approved.status, 200);
      const row = await tierRequest(asked.id);
      assert.equal(row.status, 'approved');
      assert.equal(row.granted_tier, 'resident');
      const member = await t.deps.db
        .selectFrom('members')
        .select('tier')
        .where('id', '=', asker.id)
        .executeTakeFirstOrThrow();
      assert.equal(member.tier, 'resident');
      const events = await t.deps.db
        .selectFrom('event_log')
        .select('type')
        .where('recipient_id', '=', asker.id)
        .execute();
      assert.ok(events.some((event) => event.type === 'tier_approved'));

      const again = await requestTier(t.deps, asker.id, 'core');
      const denied = await browser.request('POST', '/operator/tier-requests/decide', {
        id: again.id,
        decision: 'deny',
        reason: 'Not this season',
        csrf: browser.csrf,
      });
      assert.equal(denied.status, 200);
      assert.equal((await tierRequest(again.id)).reason, 'Not this season');
      const twice = await browser.request('POST', '/operator/tier-requests/decide', {
        id: again.id,
        decision: 'deny',
        csrf: browser.csrf,
      });
      assert.equal(twice.status, 409);

      const trail = (await audit()).filter((entry) => entry.operator_id === operator.id);
      assert.deepEqual(
        trail.map((entry) => [entry.action, entry.target, entry.outcome]),
        [
          ['tier_request.approve', asked.id, 'done'],
          ['tier_request.deny', again.id, 'done'],
          ['tier_request.deny', again.id, 'not_pending'],
        ],
      );
    });

    test('highlights: the queue previews the story; approving moves it out and is audited', async () => {
      const author = await t.member('core');
      const token = await t.token(author, ['events:submit_recap']);
      const submitted = await t.call('POST', '/api/ingest/highlights/pending', { token, body: STORY });
      assert.equal(submitted.status, 202, submitted.text);
      const operator = await t.member('operator');
      const browser = await signInThroughOutbox(t, operator.email);
      const queue = await browser.request('GET', '/operator/highlights');
      assert.match(queue.text, new RegExp(`id="${STORY.id}"`));
      assert.match(queue.text, /a &lt;talk&gt; about/);
      const decided = await browser.request('POST', '/operator/highlights/decide', {
        id: STORY.id,
        decision: 'approve',
        csrf: browser.csrf,
      });
      assert.equal(decided.status, 200);
      const row = await t.deps.db
        .selectFrom('highlights')
        .selectAll()
        .where('id', '=', STORY.id)
        .executeTakeFirstOrThrow();
      assert.equal(row.status, 'active', 'an approved highlight is published');
      assert.equal(row.decided_by, operator.id);
      const entry = (await audit()).find((e) => e.target === STORY.id);
      assert.equal(entry?.action, 'highlight.approve');
      assert.equal(entry?.operator_id, operator.id);
      assert.doesNotMatch(
        (await browser.request('GET', '/operator/highlights')).text,
        new RegExp(`id="${STORY.id}"`),
      );
    });

    test('members: an operator demotes a member, whose token gets 403 with its tier on the next call', async () => {
      const author = await t.member('core', 'Cora');
      const token = await t.token(author, ['events:submit_recap']);
      const before = await t.call('GET', '/api/ingest/highlights/pending', { token });
      assert.equal(before.status, 200);
      const operator = await t.member('operator');
      const browser = await signInThroughOutbox(t, operator.email);
      const list = await browser.request('GET', '/operator/members');
      assert.match(list.text, new RegExp(`<tr id="${author.id}"><td>Cora</td>`));
      const set = await browser.request('POST', '/operator/members/tier', {
        id: author.id,
        tier: 'member',
        csrf: browser.csrf,
      });
      assert.equal(set.status, 200);
      const stored = await t.deps.db
        .selectFrom('members')
        .select('tier')
        .where('id', '=', author.id)
        .executeTakeFirstOrThrow();
      assert.equal(stored.tier, 'member');
      const after = await t.call('POST', '/api/ingest/highlights/pending', {
        token,
        body: { ...STORY, id: '2026-07-16-demoted-story' },
      });
      assert.equal(after.status, 403);
      assert.equal(after.body.tier, 'member');
      const bad = await browser.request('POST', '/operator/members/tier', {
        id: author.id,
        tier: 'emperor',
        csrf: browser.csrf,
      });
      assert.equal(bad.status, 400);
      const entries = (await audit()).filter((entry) => entry.target === author.id);
      assert.deepEqual(
        entries.map((entry) => (entry.outcome.startsWith('unknown tier') ? 'refused' : entry.outcome)),
        ['done', 'refused'],
      );
    });

    test('feedback: open tickets are listed and resolved once, audited', async () => {
      const filed = await t.call('POST', '/api/agent/feedback', {
        body: { message: 'The <map> page is blank' },
      });
      assert.equal(filed.status, 201, filed.text);
      const ticket = filed.body.ticket_id as string;
      const operator = await t.member('operator');
      const browser = await signInThroughOutbox(t, operator.email);
      const list = await browser.request('GET', '/operator/feedback');
      assert.match(list.text, new RegExp(`id="${ticket}"`));
      assert.match(list.text, /The &lt;map&gt; page is blank/);
      const forged = await browser.request('POST', '/operator/feedback/resolve', { ticket_id: ticket });
      assert.equal(forged.status, 403);
      const resolved = await browser.request('POST', '/operator/feedback/resolve', {
        ticket_id: ticket,
        csrf: browser.csrf,
      });
      assert.equal(resolved.status, 200);
      const row = await t.deps.db
        .selectFrom('feedback')
        .select('status')
        .where('ticket_id', '=', ticket)
        .executeTakeFirstOrThrow();
      assert.equal(row.status, 'resolved');
      const again = await browser.request('POST', '/operator/feedback/resolve', {
        ticket_id: ticket,
        csrf: browser.csrf,
      });
      assert.equal(again.status, 409);
      const entries = (await audit()).filter((entry) => entry.target === ticket);
      assert.deepEqual(
        entries.map((entry) => entry.outcome),
        ['done', 'not_open'],
      );
      assert.doesNotMatch(
        (await browser.request('GET', '/operator/feedback')).text,
        new RegExp(`id="${ticket}"`),
      );
    });
  });
}
