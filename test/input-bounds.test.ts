import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ALL_SCOPES } from '../src/domain/access/scopes.ts';
import { createSession, SESSION_COOKIE } from '../src/domain/auth/sessions.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';

// Input that SQLite stores but PostgreSQL refuses (a NUL character in text, an integer past bigint)
// is refused at validation, on every surface, with a 400 naming the field: never a 500, never an
// `internal` error inside an MCP or A2A reply.

const MCP_HEADERS = {
  accept: 'application/json, text/event-stream',
  'content-type': 'application/json',
};

for (const engine of engines) {
  describe(`input the storage cannot hold is refused at validation (${engine.name})`, {
    skip: engine.skip,
  }, () => {
    let t: TestApp;
    let token: string;
    let cookie: string;
    before(async () => {
      t = await startTestApp({ engine: engine.name });
      const operator = await t.member('operator', 'Olga');
      token = await t.token(operator, ALL_SCOPES);
      cookie = `${SESSION_COOKIE}=${await createSession(t.deps.db, t.clock, operator.id)}`;
    });
    after(async () => {
      await t?.close();
    });

    function assertValidation(response: { status: number; body: any; text: string }, field: string) {
      const about = `${response.status} ${response.text.slice(0, 300)}`;
      assert.equal(response.status, 400, about);
      assert.equal(response.body.error, 'validation_failed', about);
      assert.equal(response.body.error_kind, 'validation', about);
      assert.equal(response.body.field, field, about);
      assert.match(response.body.message, new RegExp(`^${field} `), about);
    }

    async function mcpTool(name: string, args: unknown, bearer?: string) {
      const headers: Record<string, string> = { ...MCP_HEADERS };
      if (bearer) headers.authorization = `Bearer ${bearer}`;
      const response = await fetch(`${t.baseUrl}/api/mcp`, {
        method: 'POST',
        headers,
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

    async function a2aTask(capability: string, args: unknown, bearer?: string) {
      return t.call('POST', '/api/a2a', {
        body: { jsonrpc: '2.0', id: 1, method: 'tasks/send', params: { capability, arguments: args } },
        token: bearer,
      });
    }

    test('REST: a NUL character in a query value', async () => {
      const response = await t.call('GET', '/api/ingest/highlights/pending?id=%00', { token });
      assertValidation(response, 'id');
    });

    test('REST: a NUL character in the middle of a body string', async () => {
      const response = await t.call('POST', '/api/agent/signup/start', {
        body: { scopes: ['read:public'], client_name: 'my\u0000agent' },
      });
      assertValidation(response, 'client_name');
      const grants = await t.deps.db.selectFrom('device_grants').select('id').execute();
      assert.equal(grants.length, 0, 'nothing was stored');
    });

    test('REST: feedback strips a NUL like every C0 control (reference §2), stores the rest', async () => {
      const response = await t.call('POST', '/api/agent/feedback', {
        token,
        body: { message: 'A report long enough to pass the length rule \u0000 with a NUL inside it.' },
      });
      assert.equal(response.status, 201, response.text);
      const row = await t.deps.db
        .selectFrom('feedback')
        .select('message')
        .where('ticket_id', '=', response.body.ticket_id)
        .executeTakeFirstOrThrow();
      assert.equal(row.message, 'A report long enough to pass the length rule  with a NUL inside it.');
    });

    test('REST: integers past the safe range, in a query', async () => {
      for (const since of ['99999999999999999999', '1e400', '9007199254740992', '-1e400']) {
        const response = await t.call('GET', `/api/events/next?since=${since}`, { headers: { cookie } });
        assertValidation(response, 'since');
      }
    });

    test('MCP: a NUL character in a tool argument, with and without a token', async () => {
      for (const bearer of [undefined, token]) {
        const response = await mcpTool('ic_signal_get_issue', { slug: 'a\u0000b' }, bearer);
        const content = response.body.result.structuredContent;
        assert.equal(response.body.result.isError, true, response.text);
        assert.equal(content.error_kind, 'validation', response.text);
        assert.equal(content.field, 'slug', response.text);
      }
      const resolve = await mcpTool('ic_admin_feedback_resolve', { ticket_id: 'fb_\u0000' }, token);
      assert.equal(resolve.body.result.structuredContent.error_kind, 'validation', resolve.text);
      assert.equal(resolve.body.result.structuredContent.field, 'ticket_id', resolve.text);
    });

    test('MCP: a huge integer argument', async () => {
      const response = await mcpTool('ic_events_next', { since: 1e308 }, token);
      const content = response.body.result.structuredContent;
      assert.equal(content.error_kind, 'validation', response.text);
      assert.equal(content.field, 'since', response.text);
    });

    test('MCP: a NUL character in a property name', async () => {
      const response = await mcpTool('ic_signal_get_issue', { slug: 'x', 'a\u0000': 1 }, token);
      const content = response.body.result.structuredContent;
      assert.equal(content.error_kind, 'validation', response.text);
    });

    test('A2A: a NUL character and a huge integer', async () => {
      const nul = await a2aTask('ic_signal_get_issue', { slug: 'a\u0000b' });
      assert.equal(nul.body.error?.data?.error_kind, 'validation', nul.text);
      assert.equal(nul.body.error.data.field, 'slug', nul.text);
      const huge = await a2aTask('ic_events_next', { since: 1e308 }, token);
      assert.equal(huge.body.error?.data?.error_kind, 'validation', huge.text);
      assert.equal(huge.body.error.data.field, 'since', huge.text);
    });

    test('values inside the range still pass', async () => {
      const response = await t.call('GET', '/api/events/next?since=9007199254740991', {
        headers: { cookie },
      });
      assert.equal(response.status, 200, response.text);
      const tool = await mcpTool('ic_events_next', { since: 0 }, token);
      assert.equal(tool.body.result.isError, undefined, tool.text);
    });
  });
}
