import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decideTierRequest } from '../src/domain/members/tier-requests.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { signInThroughOutbox } from './support/browser.ts';
import { engines } from './support/databases.ts';

for (const engine of engines) {
  describe(`membership page (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine: engine.name });
    });
    after(() => t?.close());

    const requestsOf = (memberId: string) =>
      t.deps.db
        .selectFrom('tier_requests')
        .selectAll()
        .where('member_id', '=', memberId)
        .orderBy('created_at')
        .execute();

    test('a member asks for a higher tier with a note, withdraws it, asks again and sees the decision', async () => {
      const member = await t.member('member', 'Mina');
      const browser = await signInThroughOutbox(t, member.email);
      const first = await browser.request('GET', '/membership');
      assert.equal(first.status, 200);
      assert.match(first.text, /<strong id="tier">member<\/strong>/);
      assert.match(first.text, /<option value="resident">/);
      assert.doesNotMatch(first.text, /<option value="operator">/, 'operator is granted, not requested');

      const forged = await browser.request('POST', '/membership/request', { tier: 'resident' });
      assert.equal(forged.status, 403);
      assert.equal((await requestsOf(member.id)).length, 0);

      const asked = await browser.request('POST', '/membership/request', {
        tier: 'resident',
        note: 'I run the <Tuesday> workshop',
        csrf: browser.csrf,
      });
      assert.equal(asked.status, 303);
      const [stored] = await requestsOf(member.id);
      assert.equal(stored.tier, 'resident');
      assert.equal(stored.status, 'pending');
      assert.equal(stored.note, 'I run the <Tuesday> workshop');
      const pending = await browser.request('GET', '/membership');
      assert.match(pending.text, /id="pending"/);
      assert.match(pending.text, /I run the &lt;Tuesday&gt; workshop/);

      const withdrawn = await browser.request('POST', '/membership/cancel', { csrf: browser.csrf });
      assert.equal(withdrawn.status, 303);
      assert.notEqual((await requestsOf(member.id))[0].status, 'pending');

      const refused = await browser.request('POST', '/membership/request', {
        tier: 'operator',
        csrf: browser.csrf,
      });
      assert.equal(refused.status, 400);
      assert.match(refused.text, /granted by an operator/);

      await browser.request('POST', '/membership/request', { tier: 'core', csrf: browser.csrf });
      const latest = (await requestsOf(member.id)).at(-1)!;
      assert.equal(latest.tier, 'core');
      const operator = await t.member('operator');
      await decideTierRequest(t.deps, latest.id, operator.id, { decision: 'approve', tier: 'resident' });
      const decided = await browser.request('GET', '/membership');
      assert.match(decided.text, /<strong id="tier">resident<\/strong>/);
      assert.match(decided.text, /approved \(as resident\)/);
    });
  });
}
