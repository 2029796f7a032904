// Operator queues grow without bound (anonymous feedback, say): every operator list answers in
// pages, on the MCP and A2A tools and on the console pages, with a cursor that never skips or
// repeats a record.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { fileFeedback } from '../src/domain/feedback/feedback.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { signInThroughOutbox } from './support/browser.ts';
import { engines } from './support/databases.ts';

const TICKETS = 130;

for (const engine of engines) {
  describe(`operator lists are paged (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    let token: string;
    let operatorEmail: string;
    let client: Client;
    const filed: string[] = [];
    before(async () => {
      t = await startTestApp({ engine: engine.name });
      const operator = await t.member('operator', 'Olga');
      operatorEmail = operator.email;
      token = await t.token(operator, ['admin:feedback_review']);
      for (let i = 0; i < TICKETS; i++) {
        // Pairs share a timestamp, so the cursor's tie-break on the id is exercised.
        if (i % 2 === 0) t.clock.advance(1000);
        const row = await fileFeedback(
          t.deps,
          {
            message: `report number ${i}, long enough to draw no warning`,
            category: 'bug_report',
            priority: 'normal',
          },
          '127.0.0.1',
          undefined,
        );
        filed.push(row.ticket_id);
      }
      client = new Client({ name: 'agent-commons-tests', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${t.baseUrl}/api/mcp`), {
          requestInit: { headers: { Authorization: `Bearer ${token}` } },
        }),
      );
    });
    after(async () => {
      await client?.close();
      await t?.close();
    });

    test('MCP: pages of the asked size, newest first, every ticket exactly once, null cursor at the end', async () => {
      const seen: string[] = [];
      const sizes: number[] = [];
      let cursor: string | undefined;
      for (let round = 0; round < 10; round++) {
        const result = await client.callTool({
          name: 'ic_admin_feedback_list',
          arguments: { limit: 50, ...(cursor ? { cursor } : {}) },
        });
        assert.equal(result.isError, undefined, JSON.stringify(result));
        const body = result.structuredContent as {
          count: number;
          tickets: { ticket_id: string }[];
          next_cursor: string | null;
        };
        assert.equal(body.count, body.tickets.length);
        sizes.push(body.count);
        seen.push(...body.tickets.map((ticket) => ticket.ticket_id));
        if (body.next_cursor === null) break;
        cursor = body.next_cursor;
      }
      assert.deepEqual(sizes, [50, 50, 30]);
      assert.equal(new Set(seen).size, TICKETS, 'no ticket twice');
      assert.deepEqual([...seen].sort(), [...filed].sort(), 'every ticket');
      const stored = await t.deps.db
        .selectFrom('feedback')
        .select(['ticket_id', 'created_at'])
        .where('status', '=', 'open')
        .execute();
      const at = new Map(stored.map((row) => [row.ticket_id, Number(row.created_at)]));
      for (let i = 1; i < seen.length; i++)
        assert.ok(at.get(seen[i - 1])! >= at.get(seen[i])!, 'newest first');
    });

    test('a cursor that is not one the list gave out is a 400 naming the field, on MCP and A2A', async () => {
      const result = await client.callTool({
        name: 'ic_admin_feedback_list',
        arguments: { cursor: 'bm90LWEtY3Vyc29y' },
      });
      assert.equal(result.isError, true);
      const body = result.structuredContent as { error: { code: string; field?: string; message: string } };
      assert.match(JSON.stringify(body), /cursor/);
      const a2a = await t.call('POST', '/api/a2a', {
        token,
        body: {
          jsonrpc: '2.0',
          id: 1,
          method: 'tasks/send',
          params: { capability: 'ic_admin_feedback_list', arguments: { cursor: '%%%' } },
        },
      });
      assert.equal(a2a.status, 200);
      assert.ok(a2a.body.error, a2a.text);
      assert.match(JSON.stringify(a2a.body.error), /cursor/);
    });

    test('the console page shows 50 at a time and its links walk the whole queue once', async () => {
      const browser = await signInThroughOutbox(t, operatorEmail);
      const seen: string[] = [];
      let path = '/operator/feedback';
      for (let round = 0; round < 10; round++) {
        const page = await browser.request('GET', path);
        assert.equal(page.status, 200);
        const ids = [...page.text.matchAll(/<article class="card" id="([^"]+)"/g)].map((m) => m[1]);
        assert.ok(ids.length <= 50, `at most 50 on a page, got ${ids.length}`);
        seen.push(...ids);
        const next = page.text.match(/<a href="([^"]+)" rel="next">/)?.[1]?.replace(/&amp;/g, '&');
        if (!next) break;
        path = next;
      }
      assert.equal(seen.length, TICKETS);
      assert.deepEqual([...seen].sort(), [...filed].sort());
    });
  });
}
