// The registry's output schemas are a promise, not documentation: with CHECK_OUTPUT_SCHEMAS on
// (every test app and spawned server turns it on) an answer its schema does not allow fails as an
// internal error naming the operation and the field, on every surface, so no suite can pass while a
// body drifts from what OpenAPI, MCP and A2A advertise.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { Type } from '@sinclair/typebox';
import { strictObject } from '../src/operations/schemas.ts';
import { defineOperation } from '../src/operations/types.ts';
import { startTestApp, type TestApp } from './support/app.ts';

/** Answers `count` as a string although its schema says integer when asked to drift. */
const driftingCount = defineOperation<{ drift?: boolean }, unknown>({
  id: 'driftingCount',
  method: 'GET',
  path: '/api/test/drifting-count',
  mcpTool: 'ic_test_drifting_count',
  tag: 'test',
  summary: 'A count that can drift from its schema',
  credential: 'public',
  sandbox: 'real',
  idempotent: false,
  inputFrom: 'query',
  input: strictObject({ drift: Type.Optional(Type.Boolean()) }),
  output: Type.Object({ ok: Type.Literal(true), count: Type.Integer() }),
  successStatus: 200,
  errors: [],
  async handler({ input }) {
    return { body: { ok: true, count: input.drift ? 'three' : 3 } };
  },
});

describe('output schemas are enforced', () => {
  let t: TestApp;
  let unchecked: TestApp;
  const lines: string[] = [];
  before(async () => {
    const logStream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    t = await startTestApp({ extraOperations: [driftingCount], logStream });
    unchecked = await startTestApp({
      extraOperations: [driftingCount],
      config: { checkOutputSchemas: false },
    });
  });
  after(async () => {
    await t?.close();
    await unchecked?.close();
  });

  test('an answer its schema allows goes out; one it does not is a 500 on REST, MCP and A2A, logged with the field', async () => {
    const fine = await t.call('GET', '/api/test/drifting-count');
    assert.equal(fine.status, 200);
    assert.deepEqual(fine.body, { ok: true, count: 3 });

    const rest = await t.call('GET', '/api/test/drifting-count?drift=true');
    assert.equal(rest.status, 500);
    assert.equal(rest.body.error_kind, 'internal');
    assert.ok(
      lines.some((line) =>
        /driftingCount answered a body its output schema does not allow: \/count must be integer/.test(line),
      ),
      'the log names the operation and the field',
    );

    const a2a = await t.call('POST', '/api/a2a', {
      body: {
        jsonrpc: '2.0',
        id: 1,
        method: 'tasks/send',
        params: { capability: 'ic_test_drifting_count', arguments: { drift: true } },
      },
    });
    assert.match(a2a.text, /internal/);
    assert.doesNotMatch(a2a.text, /"three"/, 'the drifting body never goes out');
  });

  test('with the check off (the production default) the body goes out as the handler made it', async () => {
    const drifted = await unchecked.call('GET', '/api/test/drifting-count?drift=true');
    assert.equal(drifted.status, 200);
    assert.deepEqual(drifted.body, { ok: true, count: 'three' });
  });
});
