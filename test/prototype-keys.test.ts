import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { OPERATIONS } from '../src/operations/registry.ts';
import { registerMcpSurface } from '../src/surfaces/mcp.ts';
import { errorBody } from './support/a2a.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';

// One rule for a JSON key that would reach an object's prototype, on every surface (docs/api.md,
// "Bad input"): the body is refused whole, with the same message, and nothing runs. Parsed as the
// MCP SDK parses, such a key is dropped and the write goes ahead without it.

const MESSAGE = 'JSON keys __proto__ and constructor.prototype are not accepted.';
const SDK_PATH = '/api/mcp-sdk';
const MCP_HEADERS = {
  accept: 'application/json, text/event-stream',
  'content-type': 'application/json',
  'mcp-protocol-version': '2025-06-18',
};
const KEYS = [
  { name: '__proto__', member: '"__proto__":{"kind":"broken_url"}' },
  { name: 'constructor.prototype', member: '"constructor":{"prototype":{"kind":"broken_url"}}' },
];

for (const engine of engines) {
  describe(`prototype keys: one rule on REST, MCP and A2A (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({
        engine: engine.name,
        limits: { anonymousPerMinute: 1e9, feedbackPerHour: 1e9 },
        extend: (app, deps) =>
          registerMcpSurface(app, deps, OPERATIONS, { transport: 'sdk', path: SDK_PATH }),
      });
    });
    after(() => t?.close());

    const feedbackCount = async () =>
      Number(
        (
          await t.deps.db
            .selectFrom('feedback')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const post = (path: string, body: string, headers: Record<string, string> = {}) =>
      t.call('POST', path, { rawBody: body, headers: { 'content-type': 'application/json', ...headers } });
    /** A feedback report's arguments with the key in them. */
    const args = (member: string) => `{"message":"Filed with a prototype key.",${member}}`;

    for (const key of KEYS) {
      test(`${key.name}: REST (over the wire and injected) and batch answer 400 invalid_json`, async () => {
        const before = await feedbackCount();
        const wire = await post('/api/agent/feedback', args(key.member));
        const routed = await t.app.inject({
          method: 'POST',
          url: '/api/agent/feedback',
          headers: { 'content-type': 'application/json' },
          payload: args(key.member),
        });
        const batch = await post(
          '/api/batch',
          `{"requests":[{"id":"a","method":"GET","path":"/api/health",${key.member}}]}`,
        );
        for (const [label, status, body] of [
          ['over the wire', wire.status, wire.body],
          ['injected', routed.statusCode, routed.json()],
          ['batch', batch.status, batch.body],
        ] as const) {
          assert.equal(status, 400, label);
          assert.equal(body.error, 'invalid_json', label);
          assert.equal(body.error_kind, 'invalid_json', label);
          assert.equal(body.message, MESSAGE, label);
        }
        assert.equal(await feedbackCount(), before);
      });

      test(`${key.name}: MCP (both transports) answers 400 Invalid Request, and the tool does not run`, async () => {
        const before = await feedbackCount();
        for (const path of ['/api/mcp', SDK_PATH]) {
          const answer = await post(
            path,
            `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ic_feedback_submit","arguments":${args(key.member)}}}`,
            MCP_HEADERS,
          );
          assert.equal(answer.status, 400, `${path}: ${answer.text}`);
          assert.equal(answer.body.error.code, -32600, path);
          assert.equal(answer.body.error.message, `Invalid Request: ${MESSAGE}`, path);
        }
        assert.equal(await feedbackCount(), before);
      });

      test(`${key.name}: A2A (both versions, data and text parts) refuses with the same message`, async () => {
        const before = await feedbackCount();
        const call = `{"capability":"ic_feedback_submit","arguments":${args(key.member)}}`;
        const envelopes: [string, string, number][] = [
          [
            '1.0',
            `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"${randomUUID()}","role":"ROLE_USER","parts":[{"data":${call}}]}}}`,
            -32600,
          ],
          ['0.3', `{"jsonrpc":"2.0","id":1,"method":"tasks/send","params":${call}}`, -32600],
          [
            '1.0',
            `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"${randomUUID()}","role":"ROLE_USER","parts":[{"text":${JSON.stringify(call)}}]}}}`,
            -32602,
          ],
          [
            '0.3',
            `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"${randomUUID()}","role":"user","parts":[{"kind":"text","text":${JSON.stringify(`ic_feedback_submit ${args(key.member)}`)}}]}}}`,
            -32602,
          ],
        ];
        for (const [version, body, code] of envelopes) {
          const answer = await post('/api/a2a', body, { 'a2a-version': version });
          assert.equal(answer.status, 200, answer.text);
          assert.equal(answer.body.error?.code, code, answer.text);
          assert.equal(answer.body.error.message, MESSAGE);
          assert.equal(errorBody(answer.body.error.data)?.message, MESSAGE);
        }
        assert.equal(await feedbackCount(), before);
      });
    }

    test('the words as data are accepted: a value "__proto__", a key "constructor" without "prototype"', async () => {
      const before = await feedbackCount();
      const rest = await post('/api/agent/feedback', '{"message":"__proto__ and constructor.prototype"}');
      assert.equal(rest.status, 201, rest.text);
      const mcp = await post(
        '/api/mcp',
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ic_feedback_submit","arguments":{"message":"__proto__"},"_meta":{"constructor":{"name":"x"}}}}',
        MCP_HEADERS,
      );
      assert.equal(mcp.status, 200, mcp.text);
      assert.equal(mcp.body.result.isError, undefined, mcp.text);
      assert.equal(await feedbackCount(), before + 2);
    });
  });
}
