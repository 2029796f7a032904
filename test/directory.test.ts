import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { saveProfile } from '../src/domain/members/directory.ts';
import type { Member } from '../src/domain/members/members.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { signInThroughOutbox } from './support/browser.ts';
import { engines } from './support/databases.ts';

const SEARCH = '/api/directory/search';

for (const engine of engines) {
  describe(`member directory (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    let ada: Member;
    let grace: Member;
    let hidden: Member;
    before(async () => {
      t = await startTestApp({ engine: engine.name });
      ada = await t.member('member', 'Ada Lovelace');
      grace = await t.member('core', 'Grace Hopper');
      hidden = await t.member('member', 'Hedy Hidden');
      const listed = { visibility: 'members' as const };
      await saveProfile(t.deps, ada.id, {
        ...listed,
        bio: 'Writes notes on analytical engines.',
        skills: 'mathematics, poetry',
        projects: 'Engine notes',
        showEmail: true,
      });
      await saveProfile(t.deps, grace.id, {
        ...listed,
        bio: 'Compilers, and teaching them to everyone. Engines too, a little.',
        skills: 'compilers, cobol',
        projects: 'Nanosecond wire',
        showEmail: false,
      });
      await saveProfile(t.deps, hidden.id, {
        visibility: 'hidden',
        bio: 'Frequency hopping and engines.',
        skills: 'radio',
        projects: 'engines',
        showEmail: true,
      });
    });
    after(() => t?.close());

    async function caller(tier: string) {
      const member = await t.member(tier);
      return t.token(member, ['directory:search']);
    }
    const search = async (token: string, query: string) => t.call('GET', `${SEARCH}?${query}`, { token });

    test('full text over name, bio, skills and projects, prefixes included, best match first', async () => {
      const token = await caller('resident');
      const compilers = await search(token, 'q=compil');
      assert.equal(compilers.status, 200);
      assert.deepEqual(compilers.body, {
        ok: true,
        query: 'compil',
        count: 1,
        next_cursor: null,
        results: [
          {
            handle: compilers.body.results[0].handle,
            name: 'Grace Hopper',
            bio: 'Compilers, and teaching them to everyone. Engines too, a little.',
            skills: 'compilers, cobol',
            projects: 'Nanosecond wire',
          },
        ],
      });
      const engines = await search(token, 'q=engine');
      assert.deepEqual(
        engines.body.results.map((r: { name: string }) => r.name),
        ['Ada Lovelace', 'Grace Hopper'],
        'Ada mentions engines twice, Grace once; hidden Hedy never',
      );
      const byName = await search(token, 'q=lovelace');
      assert.deepEqual(
        byName.body.results.map((r: { name: string }) => r.name),
        ['Ada Lovelace'],
      );
    });

    test('hidden members never appear, whatever the query or the caller', async () => {
      const operator = await caller('operator');
      for (const query of ['q=hedy', 'q=radio', 'q=hopping', 'q=', 'limit=50']) {
        const response = await search(operator, query);
        assert.equal(response.status, 200);
        assert.ok(!response.body.results.some((r: { name: string }) => r.name === 'Hedy Hidden'), query);
      }
    });

    test('fields depend on the caller’s tier and the member’s own choice', async () => {
      const resident = await search(await caller('resident'), 'q=ada');
      assert.equal(resident.body.results[0].email, undefined);
      assert.equal(resident.body.results[0].tier, undefined);
      const core = await search(await caller('core'), 'q=engine');
      const [adaEntry, graceEntry] = core.body.results;
      assert.equal(adaEntry.email, ada.email, 'Ada shows her email to core callers');
      assert.equal(graceEntry.email, undefined, 'Grace does not show hers');
      assert.equal(adaEntry.tier, undefined);
      const operator = await search(await caller('operator'), 'q=engine');
      assert.equal(operator.body.results[0].tier, 'member');
    });

    test('query syntax never reaches the engine; limits are checked', async () => {
      const token = await caller('resident');
      for (const q of ['"unbalanced', 'a OR b NOT', 'engine*', "x' or 1=1 --", 'NEAR(a b)', '*', ':']) {
        const response = await search(token, `q=${encodeURIComponent(q)}`);
        assert.equal(response.status, 200, q);
        assert.equal(response.body.ok, true);
      }
      assert.equal((await search(token, `q=${'x'.repeat(201)}`)).status, 400);
      assert.equal((await search(token, 'limit=0')).status, 400);
      assert.equal((await search(token, 'limit=1&q=engine')).body.count, 1);
    });

    test('pages chain by next_cursor, the list by name and a search by rank: none lost or repeated', async () => {
      const token = await caller('resident');
      for (let i = 0; i < 7; i++) {
        const member = await t.member('member', `Pager ${i % 3}`);
        await saveProfile(t.deps, member.id, {
          visibility: 'members',
          bio: 'pagination sample',
          skills: 'paging',
          projects: '',
          showEmail: false,
        });
      }
      for (const q of ['', 'q=paging']) {
        const whole = (await search(token, `${q}&limit=50`)).body;
        assert.equal(whole.next_cursor, null);
        const walked: string[] = [];
        let cursor: string | null = null;
        for (let round = 0; round < 20; round++) {
          const page = await search(token, `${q}&limit=3${cursor ? `&cursor=${cursor}` : ''}`);
          assert.equal(page.status, 200);
          assert.ok(page.body.count <= 3);
          walked.push(...page.body.results.map((entry: { handle: string }) => entry.handle));
          cursor = page.body.next_cursor;
          if (!cursor) break;
        }
        assert.deepEqual(
          walked,
          whole.results.map((entry: { handle: string }) => entry.handle),
          q,
        );
        assert.ok(walked.length >= 7);
      }
      const listCursor = (await search(token, 'limit=1')).body.next_cursor;
      const refused = await search(token, `q=paging&cursor=${listCursor}`);
      assert.equal(refused.status, 400, 'a list cursor on a search');
      assert.equal((await search(token, 'cursor=bm90LWEtY3Vyc29y')).status, 400);
    });

    test('a member below resident, or a token without the scope, is refused', async () => {
      const member = await t.member('member');
      const token = await t.token(member, ['membership:read']);
      const refused = await search(token, 'q=ada');
      assert.equal(refused.status, 403);
      assert.equal(refused.body.error, 'insufficient_scope');
      await t.deps.db.updateTable('members').set({ tier: 'member' }).where('id', '=', member.id).execute();
      const resident = await t.member('resident');
      const scoped = await t.token(resident, ['directory:search']);
      await t.deps.db.updateTable('members').set({ tier: 'member' }).where('id', '=', resident.id).execute();
      const demoted = await search(scoped, 'q=ada');
      assert.equal(demoted.status, 403);
      assert.equal(demoted.body.tier, 'member');
    });

    test('a member lists and hides themself from the membership page', async () => {
      const member = await t.member('member', 'Katherine Johnson');
      const browser = await signInThroughOutbox(t, member.email);
      const page = await browser.request('GET', '/membership');
      assert.match(page.text, /value="hidden" checked/);
      const form = {
        visibility: 'members',
        bio: 'Orbital <mechanics>',
        skills: 'trajectories',
        projects: 'Friendship 7',
        show_email: '1',
      };
      assert.equal((await browser.request('POST', '/membership/profile', form)).status, 403, 'CSRF checked');
      const saved = await browser.request('POST', '/membership/profile', { ...form, csrf: browser.csrf });
      assert.equal(saved.status, 303);
      const row = await t.deps.db
        .selectFrom('member_profiles')
        .selectAll()
        .where('member_id', '=', member.id)
        .executeTakeFirstOrThrow();
      assert.deepEqual(
        { bio: row.bio, skills: row.skills, visibility: row.visibility, show_email: Number(row.show_email) },
        { bio: 'Orbital <mechanics>', skills: 'trajectories', visibility: 'members', show_email: 1 },
      );
      const again = await browser.request('GET', '/membership');
      assert.match(again.text, /Orbital &lt;mechanics&gt;/);
      const token = await caller('resident');
      assert.equal((await search(token, 'q=trajectories')).body.count, 1);
      await browser.request('POST', '/membership/profile', {
        ...form,
        visibility: 'hidden',
        csrf: browser.csrf,
      });
      assert.equal((await search(token, 'q=trajectories')).body.count, 0);
      const bad = await browser.request('POST', '/membership/profile', {
        ...form,
        visibility: 'everyone',
        csrf: browser.csrf,
      });
      assert.equal(bad.status, 400);
    });
  });
}
