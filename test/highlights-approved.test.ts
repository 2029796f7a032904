import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decideHighlight } from '../src/domain/highlights/highlights.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';
import { story } from './support/highlight-story.ts';

/** The public list of approved highlights: one registry operation on REST, MCP and A2A. */
for (const engine of engines) {
  describe(`approved highlights, publicly listed (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine: engine.name, limits: { highlightsPerDay: 10 } });
    });
    after(() => t?.close());

    const mcp = async (name: string, args: Record<string, unknown>) => {
      const response = await t.call('POST', '/api/mcp', {
        headers: { accept: 'application/json, text/event-stream' },
        body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
      });
      assert.equal(response.status, 200, response.text);
      return response.body.result.structuredContent;
    };
    const a2a = async (capability: string, args: Record<string, unknown>) => {
      const response = await t.call('POST', '/api/a2a', {
        body: { jsonrpc: '2.0', id: 1, method: 'tasks/send', params: { capability, arguments: args } },
      });
      assert.equal(response.status, 200, response.text);
      return response.body.result;
    };

    test('only approved stories, newest approval first, as submitted; paged; the same on every surface', async () => {
      const empty = await t.call('GET', '/api/highlights');
      assert.equal(empty.status, 200, empty.text);
      assert.deepEqual(empty.body, { ok: true, count: 0, highlights: [], next_cursor: null });

      const member = await t.member('core');
      const token = await t.token(member, ['events:submit_recap']);
      const ids = [
        '2026-05-08-ada-first',
        '2026-05-08-ada-second',
        '2026-05-08-ada-rejected',
        '2026-05-08-ada-waiting',
      ];
      const sent = ids.map((id) => story(id, { date: 'MAY 08' }));
      for (const body of sent) {
        const submitted = await t.call('POST', '/api/ingest/highlights/pending', { token, body });
        assert.equal(submitted.status, 202, submitted.text);
      }
      assert.equal(await decideHighlight(t.deps, ids[0], 'approve', 'op'), 'done');
      t.clock.advance(1000);
      assert.equal(await decideHighlight(t.deps, ids[1], 'approve', 'op'), 'done');
      assert.equal(await decideHighlight(t.deps, ids[2], 'reject', 'op'), 'done');

      const listed = await t.call('GET', '/api/highlights');
      assert.equal(listed.status, 200, listed.text);
      assert.deepEqual(
        listed.body.highlights.map((h: { id: string }) => h.id),
        [ids[1], ids[0]],
        'approved only, most recently approved first',
      );
      assert.deepEqual(listed.body.highlights[0].story, sent[1], 'the story as it was submitted');
      const stored = await t.deps.db
        .selectFrom('highlights')
        .select(['id', 'decided_at'])
        .where('id', '=', ids[1])
        .executeTakeFirstOrThrow();
      assert.equal(listed.body.highlights[0].approved_at, new Date(Number(stored.decided_at)).toISOString());

      const first = await t.call('GET', '/api/highlights?limit=1');
      assert.equal(first.body.count, 1);
      assert.equal(first.body.highlights[0].id, ids[1]);
      const second = await t.call('GET', `/api/highlights?limit=1&cursor=${first.body.next_cursor}`);
      assert.deepEqual(
        second.body.highlights.map((h: { id: string }) => h.id),
        [ids[0]],
      );
      assert.equal(second.body.next_cursor, null);

      assert.deepEqual(await mcp('ic_highlights_list', {}), listed.body, 'MCP answers the same');
      assert.deepEqual(await a2a('ic_highlights_list', {}), listed.body, 'A2A answers the same');

      const badCursor = await t.call('GET', '/api/highlights?cursor=nope');
      assert.equal(badCursor.status, 400);
      assert.equal(badCursor.body.field, 'cursor');
    });
  });
}
