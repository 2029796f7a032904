// A reader of the event log whose cursor is older than the oldest record retention kept: the page
// starts at the oldest kept record and says, in pruned_through, the last id no longer kept; the same
// on the REST session read, the ic_events_next tool (through A2A) and with a type filter. A reader
// who missed nothing gets the page as before, without the field.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MS } from '../src/clock.ts';
import { createSession, SESSION_COOKIE } from '../src/domain/auth/sessions.ts';
import { appendEvent } from '../src/domain/eventlog/eventlog.ts';
import type { Member } from '../src/domain/members/members.ts';
import { sweepRetention } from '../src/domain/retention/sweep.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';

for (const engine of engines) {
  describe(`event-log reads past pruned records (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine: engine.name });
    });
    after(() => t?.close());

    const append = (member: Member, at: number) =>
      appendEvent(t.deps.db, member.id, { type: 'tier_approved', actor: { kind: 'system' }, target: {} }, at);

    async function read(member: Member, token: string, query: Record<string, string | number | string[]>) {
      const cookie = `${SESSION_COOKIE}=${await createSession(t.deps.db, t.clock, member.id)}`;
      const params = new URLSearchParams(
        Object.entries(query).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : String(v)]),
      );
      const rest = await t.call('GET', `/api/events/next?${params}`, { headers: { cookie } });
      assert.equal(rest.status, 200, rest.text);
      const viaTool = await t.call('POST', '/api/a2a', {
        body: {
          jsonrpc: '2.0',
          id: 1,
          method: 'tasks/send',
          params: { capability: 'ic_events_next', arguments: query },
        },
        token,
      });
      const { as_of: _restAt, ...restBody } = rest.body;
      const { as_of: _toolAt, ...toolBody } = viaTool.body.result;
      assert.deepEqual(toolBody, restBody, 'the tool answers as the REST read does');
      return rest.body as {
        events: { id: number }[];
        cursor: number;
        has_more: boolean;
        pruned_through?: number;
      };
    }

    test('a cursor before the oldest kept record: the page from it on, and pruned_through', async () => {
      const member = await t.member('member');
      const old = t.clock.now() - 400 * MS.day;
      for (let i = 0; i < 5; i++) await append(member, old + i); // ids 1-5, past the 365 days
      const token = await t.token(member, ['membership:read']); // id 6, token_minted
      await append(member, t.clock.now()); // id 7
      const swept = await sweepRetention(t.deps);
      assert.equal(swept.kinds.find((k) => k.kind === 'eventLog')?.rows, 5);

      for (const since of [0, 3, 4]) {
        const page = await read(member, token, { since });
        assert.deepEqual(
          page.events.map((e) => e.id),
          [6, 7],
          `since ${since}`,
        );
        assert.equal(page.pruned_through, 5, `since ${since}`);
        assert.equal(page.cursor, 7);
      }
      const first = await read(member, token, { since: 0, limit: 1 });
      assert.deepEqual(
        [first.events.map((e) => e.id), first.cursor, first.has_more, first.pruned_through],
        [[6], 6, true, 5],
      );
      // With a type filter the gap is told the same way: the removed records' types are unknown.
      const filtered = await read(member, token, { since: 2, types: ['tier_approved'] });
      assert.deepEqual(
        filtered.events.map((e) => e.id),
        [7],
      );
      assert.equal(filtered.pruned_through, 5);
      // Missed nothing: no field, as before.
      for (const since of [5, 6, 7]) {
        const page = await read(member, token, { since });
        assert.equal('pruned_through' in page, false, `since ${since}`);
      }
    });

    test('every record pruned: no events, the cursor moves past them', async () => {
      const member = await t.member('member');
      const token = await t.token(member, ['membership:read']); // id 1
      const old = t.clock.now() - 400 * MS.day;
      await t.deps.db
        .updateTable('event_log')
        .set({ at: old })
        .where('recipient_id', '=', member.id)
        .execute();
      for (let i = 0; i < 2; i++) await append(member, old); // ids 2, 3
      await sweepRetention(t.deps);
      const page = await read(member, token, { since: 0 });
      assert.deepEqual([page.events, page.cursor, page.has_more, page.pruned_through], [[], 3, false, 3]);
      assert.equal('pruned_through' in (await read(member, token, { since: 3 })), false);
      // A new reader with an empty log sees no gap.
      const fresh = await t.member('member');
      const freshToken = await t.token(fresh, ['membership:read']);
      assert.equal('pruned_through' in (await read(fresh, freshToken, { since: 0 })), false);
    });
  });
}
