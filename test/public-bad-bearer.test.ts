import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { revokeToken } from '../src/domain/auth/tokens.ts';
import { sha256 } from '../src/secrets.ts';
import { errorBody } from './support/a2a.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';

// One rule for a bad bearer on a public operation, on REST, MCP and A2A alike (the contract's, on
// feedback: "an invalid token is treated as anonymous, not refused"): the call is answered as if no
// token were sent. A member operation still refuses it: 401 with error="invalid_token".

const MCP_HEADERS = {
  accept: 'application/json, text/event-stream',
  'content-type': 'application/json',
  'mcp-protocol-version': '2025-06-18',
};

for (const engine of engines) {
  describe(`a bad bearer on a public operation is anonymous on every surface (${engine.name})`, {
    skip: engine.skip,
  }, () => {
    let t: TestApp;
    const bad: { label: string; authorization: string }[] = [];
    before(async () => {
      t = await startTestApp({
        engine: engine.name,
        limits: { anonymousPerMinute: 1e9, tokenPerMinute: 1e9, feedbackPerHour: 1e9 },
      });
      const member = await t.member('core', 'Revoked Holder');
      const revoked = await t.token(member, ['feedback:submit', 'membership:read']);
      const row = await t.deps.db
        .selectFrom('tokens')
        .select('id')
        .where('hash', '=', sha256(revoked))
        .executeTakeFirstOrThrow();
      await revokeToken(t.deps, row.id);
      bad.push(
        { label: 'revoked', authorization: `Bearer ${revoked}` },
        { label: 'unknown agt_', authorization: `Bearer agt_${randomBytes(32).toString('base64url')}` },
        { label: 'malformed agt_', authorization: 'Bearer agt_short' },
        { label: 'garbage', authorization: 'Bearer !!not-a-token!!' },
        { label: 'not a bearer', authorization: 'Basic dXNlcjpwYXNz' },
      );
    });
    after(() => t?.close());

    const mcp = async (authorization: string | undefined, message: unknown) => {
      const response = await fetch(`${t.baseUrl}/api/mcp`, {
        method: 'POST',
        headers: { ...MCP_HEADERS, ...(authorization ? { authorization } : {}) },
        body: JSON.stringify(message),
      });
      const text = await response.text();
      return {
        status: response.status,
        headers: response.headers,
        body: text ? JSON.parse(text) : undefined,
      };
    };
    const a2a = async (authorization: string | undefined, capability: string, args: unknown) =>
      t.call('POST', '/api/a2a', {
        body: { jsonrpc: '2.0', id: 1, method: 'tasks/send', params: { capability, arguments: args } },
        headers: authorization ? { authorization } : {},
      });
    const tool = (name: string, args: unknown) => ({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name, arguments: args },
    });
    const feedbackOf = (ticket: string) =>
      t.deps.db.selectFrom('feedback').select('member_id').where('ticket_id', '=', ticket).executeTakeFirst();

    test('the upcoming-events read: the same answer as with no token, on REST, MCP and A2A', async () => {
      const anonymous = await t.call('GET', '/api/events/upcoming?limit=3');
      assert.equal(anonymous.status, 200);
      for (const { label, authorization } of bad) {
        const rest = await t.call('GET', '/api/events/upcoming?limit=3', { headers: { authorization } });
        assert.equal(rest.status, 200, `REST ${label}: ${rest.text}`);
        assert.deepEqual(rest.body, anonymous.body, `REST ${label}`);
        const viaMcp = await mcp(authorization, tool('ic_events_list_upcoming', { limit: 3 }));
        assert.equal(viaMcp.status, 200, `MCP ${label}: ${JSON.stringify(viaMcp.body)}`);
        assert.equal(viaMcp.headers.get('www-authenticate'), null, `MCP ${label}`);
        assert.deepEqual(viaMcp.body.result.structuredContent, anonymous.body, `MCP ${label}`);
        const viaA2a = await a2a(authorization, 'ic_events_list_upcoming', { limit: 3 });
        assert.equal(viaA2a.status, 200, `A2A ${label}: ${viaA2a.text}`);
        assert.deepEqual(viaA2a.body.result, anonymous.body, `A2A ${label}`);
      }
    });

    test('feedback: filed anonymously on REST, MCP and A2A', async () => {
      for (const { label, authorization } of bad) {
        const message = { message: `Filed with a ${label} bearer.` };
        const rest = await t.call('POST', '/api/agent/feedback', {
          body: message,
          headers: { authorization },
        });
        const viaMcp = await mcp(authorization, tool('ic_feedback_submit', message));
        const viaA2a = await a2a(authorization, 'ic_feedback_submit', message);
        assert.equal(rest.status, 201, `REST ${label}: ${rest.text}`);
        assert.equal(viaMcp.status, 200, `MCP ${label}: ${JSON.stringify(viaMcp.body)}`);
        assert.equal(viaA2a.status, 200, `A2A ${label}: ${viaA2a.text}`);
        const tickets = [
          rest.body.ticket_id,
          viaMcp.body.result.structuredContent.ticket_id,
          viaA2a.body.result.ticket_id,
        ];
        for (const ticket of tickets) {
          assert.equal(typeof ticket, 'string', label);
          assert.equal((await feedbackOf(ticket))?.member_id, null, `${label}: filed as no one's`);
        }
      }
    });

    test('MCP initialize and tools/list with a bad bearer are served (the SDK client connects)', async () => {
      for (const { label, authorization } of bad) {
        const client = new Client({ name: 'bad-bearer', version: '1.0.0' });
        const transport = new StreamableHTTPClientTransport(new URL(`${t.baseUrl}/api/mcp`), {
          requestInit: { headers: { Authorization: authorization } },
        });
        await client.connect(transport);
        const { tools } = await client.listTools();
        assert.ok(
          tools.some((listed) => listed.name === 'ic_events_list_upcoming'),
          label,
        );
        const result = await client.callTool({ name: 'ic_health', arguments: {} });
        assert.equal(result.isError, undefined, label);
        await client.close();
      }
    });

    test('a member operation still refuses it, on every surface, with error="invalid_token"', async () => {
      for (const { label, authorization } of bad) {
        const rest = await t.call('GET', '/api/activity/me', { headers: { authorization } });
        assert.equal(rest.status, 401, `REST ${label}`);
        const viaMcp = await mcp(authorization, tool('ic_activity_get_recent', {}));
        assert.equal(viaMcp.status, 401, `MCP ${label}`);
        assert.equal(viaMcp.body.result.structuredContent.error, rest.body.error, `MCP ${label}`);
        assert.match(viaMcp.headers.get('www-authenticate') ?? '', /^Bearer error="invalid_token"/, label);
        const viaA2a = await a2a(authorization, 'ic_activity_get_recent', {});
        assert.equal(viaA2a.status, 401, `A2A ${label}`);
        assert.equal(errorBody(viaA2a.body.error.data)?.error, rest.body.error, `A2A ${label}`);
        assert.match(viaA2a.headers.get('www-authenticate') ?? '', /^Bearer error="invalid_token"/, label);
      }
    });
  });
}
