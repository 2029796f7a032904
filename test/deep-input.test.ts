import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ALL_SCOPES } from '../src/domain/access/scopes.ts';
import { MAX_NESTING } from '../src/operations/pipeline/validate.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';

// Found by the fuzz suite: input nested some thousands of levels deep parses (JSON.parse reads any
// depth) but overflowed the call stack where it was measured or written back (an internal error on
// MCP and A2A); and MCP params of the wrong shape were answered as an internal error by the SDK.
// Both are client mistakes: refused as such, naming what is wrong.

const MCP_HEADERS = {
  accept: 'application/json, text/event-stream',
  'content-type': 'application/json',
};

const deepObject = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
const deepArray = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

for (const engine of engines) {
  describe(`deeply nested input and malformed MCP params (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    let token: string;
    before(async () => {
      t = await startTestApp({ engine: engine.name });
      token = await t.token(await t.member('operator'), ALL_SCOPES);
    });
    after(async () => {
      await t?.close();
    });

    async function post(path: string, body: string, headers: Record<string, string>) {
      const response = await fetch(t.baseUrl + path, {
        method: 'POST',
        headers: { ...headers, authorization: `Bearer ${token}` },
        body,
      });
      const text = await response.text();
      return { status: response.status, text, body: JSON.parse(text) };
    }
    const mcp = (name: string, args: string) =>
      post(
        '/api/mcp',
        `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"${name}","arguments":${args}}}`,
        MCP_HEADERS,
      );
    const a2a = (capability: string, args: string) =>
      post(
        '/api/a2a',
        `{"jsonrpc":"2.0","id":7,"method":"tasks/send","params":{"capability":"${capability}","arguments":${args}}}`,
        { 'content-type': 'application/json' },
      );

    test('REST: a field nested past the limit is a 400 naming it', async () => {
      const response = await post(
        '/api/agent/feedback',
        `{"message":"A report long enough to be filed.","context":${deepArray(5000)}}`,
        { 'content-type': 'application/json' },
      );
      assert.equal(response.status, 400, response.text);
      assert.equal(response.body.error_kind, 'validation', response.text);
      assert.match(response.body.field, /^context(\.0)+$/, response.text);
      assert.match(
        response.body.message,
        new RegExp(`nested deeper than ${MAX_NESTING} levels`),
        response.text,
      );
    });

    test('MCP: arguments nested 20 000 levels deep are a validation error, not an internal one', async () => {
      // Larger than the tool's body cap, so the surface measures the arguments before the pipeline.
      const response = await mcp('ic_health', deepObject(20_000));
      assert.equal(response.status, 200, response.text);
      assert.equal(response.body.result?.isError, true, response.text.slice(0, 300));
      assert.equal(
        response.body.result.structuredContent.error_kind,
        'validation',
        response.text.slice(0, 300),
      );
    });

    test('A2A: the same arguments are a validation error, not an internal one', async () => {
      for (const args of [deepObject(20_000), `{"since":0,"types":${deepArray(20_000)}}`]) {
        const response = await a2a('ic_events_next', args);
        assert.equal(response.body.error?.code, -32602, response.text.slice(0, 300));
        assert.equal(response.body.error.data.error_kind, 'validation', response.text.slice(0, 300));
      }
    });

    test('MCP: params of the wrong shape are Invalid params (-32602), naming the place', async () => {
      const response = await mcp('ic_health', '"just a string"');
      assert.equal(response.body.id, 7, response.text);
      assert.equal(response.body.error?.code, -32602, response.text);
      assert.match(response.body.error.message, /^Invalid params: params\.arguments: /, response.text);
      const noName = await post(
        '/api/mcp',
        '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{}}',
        MCP_HEADERS,
      );
      assert.equal(noName.body.error?.code, -32602, noName.text);
      assert.match(noName.body.error.message, /params\.name/, noName.text);
      const initialize = await post(
        '/api/mcp',
        '{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}',
        MCP_HEADERS,
      );
      assert.equal(initialize.body.error?.code, -32602, initialize.text);
    });

    test('MCP: in a batch, a malformed call is refused and the others run', async () => {
      const response = await post(
        '/api/mcp',
        JSON.stringify([
          { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ic_health', arguments: 5 } },
          { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'ic_health', arguments: {} } },
        ]),
        MCP_HEADERS,
      );
      assert.equal(response.status, 200, response.text);
      assert.equal(response.body[0].id, 1, response.text);
      assert.equal(response.body[0].error.code, -32602, response.text);
      assert.equal(response.body[1].id, 2, response.text);
      assert.equal(response.body[1].result.isError, undefined, response.text);
    });
  });
}
