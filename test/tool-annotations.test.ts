import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { OPERATIONS } from '../src/operations/registry.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';

for (const engine of engines) {
  describe(`tool annotations and output schemas from the registry (${engine.name})`, {
    skip: engine.skip,
  }, () => {
    let t: TestApp;
    let client: Client;
    before(async () => {
      t = await startTestApp({ engine: engine.name });
      client = new Client({ name: 'annotations-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${t.baseUrl}/api/mcp`)));
    });
    after(async () => {
      await client?.close();
      await t?.close();
    });

    test('every tool has a title and the four hints, derived from its declaration', async () => {
      const { tools } = await client.listTools();
      assert.equal(tools.length, OPERATIONS.filter((op) => op.mcpTool).length);
      for (const tool of tools) {
        const op = OPERATIONS.find((candidate) => candidate.mcpTool === tool.name)!;
        assert.equal(tool.title, op.summary, tool.name);
        for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const)
          assert.equal(typeof tool.annotations?.[hint], 'boolean', `${tool.name} ${hint}`);
        if (op.method === 'GET') assert.equal(tool.annotations?.readOnlyHint, true, tool.name);
      }
      const hints = (name: string) => tools.find((tool) => tool.name === name)?.annotations;
      assert.deepEqual(hints('ic_token_revoke'), {
        title: 'Revoke the calling token',
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: true,
        openWorldHint: false,
      });
      assert.equal(hints('ic_events_get')?.readOnlyHint, true);
      assert.equal(
        hints('ic_health')?.readOnlyHint,
        true,
        'an MCP-only operation a sandbox token runs for real',
      );
      assert.equal(hints('ic_admin_tier_requests_list')?.readOnlyHint, true);
      assert.equal(
        hints('ic_admin_tier_request_decide')?.destructiveHint,
        true,
        'an operator decision overwrites',
      );
      assert.equal(hints('ic_events_rsvp')?.readOnlyHint, false);
      assert.equal(hints('ic_events_rsvp')?.destructiveHint, false, 'an RSVP adds');
      assert.deepEqual(
        [hints('ic_research_ask')?.readOnlyHint, hints('ic_research_ask')?.openWorldHint],
        [true, true],
        'a question sent as a POST, answered by a provider',
      );
      assert.equal(hints('ic_leaderboard_set_optin')?.idempotentHint, true);
    });

    test('a tool whose answer the registry knows as an object has an outputSchema; the SDK client validates results against it', async () => {
      const { tools } = await client.listTools();
      const withSchema = tools.filter((tool) => tool.outputSchema);
      assert.ok(withSchema.length >= tools.length / 2, `${withSchema.length} of ${tools.length}`);
      const health = tools.find((tool) => tool.name === 'ic_health');
      assert.equal(health?.outputSchema?.type, 'object');
      // A success and an in-band refusal both pass the client's validation (it checks structuredContent either way).
      const ok = await client.callTool({ name: 'ic_health', arguments: {} });
      assert.equal(ok.isError, undefined);
      const refused = await client.callTool({
        name: 'ic_events_get',
        arguments: { url: 'https://events.example/no-such-event' },
      });
      assert.equal(refused.isError, true);
      assert.equal((refused.structuredContent as { ok: boolean }).ok, false);
    });

    test('the A2A skills and the OpenAPI state the same facts', async () => {
      const card = (await t.call('GET', '/.well-known/agent-card.json')).body;
      const tags = (id: string) =>
        card.skills.find((skill: { id: string }) => skill.id === id).tags as string[];
      assert.ok(tags('ic_token_revoke').includes('destructive'));
      assert.ok(tags('ic_token_revoke').includes('idempotent'));
      assert.ok(tags('ic_events_get').includes('read-only'));
      assert.ok(tags('ic_events_rsvp').includes('writes'));
      const openapi = (await t.call('GET', '/openapi.json')).body;
      assert.deepEqual(openapi.paths['/api/agent/token/revoke'].post['x-effects'], {
        title: 'Revoke the calling token',
        readOnly: false,
        destructive: true,
        idempotent: true,
        openWorld: false,
      });
      assert.equal(openapi.paths['/api/events/get'].get['x-effects'].readOnly, true);
    });
  });
}
