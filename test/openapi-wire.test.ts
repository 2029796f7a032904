import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { OPERATIONS } from '../src/operations/registry.ts';
import { isRestOperation } from '../src/operations/types.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';
import { fuzzEngine } from './support/fuzz.ts';

/**
 * OpenAPI says what the wire does: every status the fuzz pass saw an operation
 * answer on REST is declared for it in /openapi.json, and the body seen validates against the schema
 * declared for that status; every operation declares 429 (every call is rate limited) and two of
 * them are driven to a real 429 here.
 */
const RUNS = Number(process.env.WIRE_FUZZ_RUNS ?? 1500);
const SECONDS = Number(process.env.WIRE_FUZZ_SECONDS ?? 15);
const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);

type OpenApi = {
  paths: Record<string, Record<string, { operationId: string; responses: Record<string, any> }>>;
  components: { schemas: Record<string, unknown> };
};

/** Each operation's declared responses, by operationId (aliases are left out: they repeat their operation). */
function declaredResponses(doc: OpenApi): Map<string, { pointer: string; responses: Record<string, any> }> {
  const byId = new Map<string, { pointer: string; responses: Record<string, any> }>();
  for (const [path, methods] of Object.entries(doc.paths))
    for (const [method, operation] of Object.entries(methods)) {
      if ((operation as { 'x-alias-of'?: string })['x-alias-of']) continue;
      const pointer = `/paths/${path.replaceAll('~', '~0').replaceAll('/', '~1')}/${method}/responses`;
      byId.set(operation.operationId, { pointer, responses: operation.responses });
    }
  return byId;
}

/** A validator for the schema declared at a JSON pointer of the document, its $refs resolved in it. */
function schemaChecker(doc: OpenApi) {
  const ajv = new Ajv({ strict: false, allErrors: false });
  addFormats.default(ajv);
  ajv.addSchema({ ...doc, $id: 'openapi.json' });
  return (pointer: string, body: unknown): string | undefined => {
    const validate = ajv.compile({ $ref: `openapi.json#${pointer}` });
    if (validate(body)) return undefined;
    return JSON.stringify(validate.errors?.[0]);
  };
}

describe('OpenAPI against the wire', () => {
  let t: TestApp;
  let doc: OpenApi;
  before(async () => {
    t = await startTestApp({ limits: { anonymousPerMinute: 3 } });
    doc = (await t.call('GET', '/openapi.json')).body;
  });
  after(() => t?.close());

  test('every REST operation declares 429 with Retry-After', () => {
    const declared = declaredResponses(doc);
    for (const op of OPERATIONS.filter(isRestOperation)) {
      const responses = declared.get(op.id)?.responses;
      assert.ok(responses, `${op.id} is in /openapi.json`);
      assert.ok(responses['429'], `${op.id} declares 429`);
      assert.ok(responses['429'].headers?.['Retry-After'], `${op.id}'s 429 declares Retry-After`);
    }
  });

  test('a real 429 on GET /api/events/upcoming and GET /api/agent/setup-check, as declared', async () => {
    const check = schemaChecker(doc);
    const declared = declaredResponses(doc);
    for (const [id, path] of [
      ['listUpcomingEvents', '/api/events/upcoming'],
      ['setupCheck', '/api/agent/setup-check'],
    ]) {
      t.clock.advance(60_000);
      let response = await t.call('GET', path);
      for (let i = 0; i < 5 && response.status !== 429; i++) response = await t.call('GET', path);
      assert.equal(response.status, 429, `${path}: ${response.text}`);
      assert.ok(Number(response.headers.get('retry-after')) > 0);
      const { pointer } = declared.get(id)!;
      assert.equal(check(`${pointer}/429/content/application~1json/schema`, response.body), undefined);
    }
  });

  test('the booking email agents must send is required in OpenAPI and in the MCP tool', async () => {
    const book = doc.paths['/api/resources/book'].post as unknown as {
      requestBody: { content: { 'application/json': { schema: { required: string[] } } } };
    };
    assert.ok(book.requestBody.content['application/json'].schema.required.includes('email'));
    t.clock.advance(60_000);
    const listed = await t.call('POST', '/api/mcp', {
      headers: { accept: 'application/json, text/event-stream' },
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    });
    const tool = listed.body.result.tools.find((x: { name: string }) => x.name === 'ic_resources_book');
    assert.ok(tool.inputSchema.required.includes('email'));
  });
});

for (const engine of engines) {
  describe(`statuses seen on the wire are declared (${engine.name})`, { skip: engine.skip }, () => {
    test(`a fuzz pass of up to ${RUNS} calls or ${SECONDS} s, seed ${seed}`, {
      timeout: (SECONDS + 90) * 1000,
    }, async (t) => {
      const report = await fuzzEngine(engine.name, {
        runs: RUNS,
        seed,
        timeLimitMs: SECONDS * 1000,
        mode: 'collect',
      });
      const app = await startTestApp({ engine: engine.name });
      let doc: OpenApi;
      try {
        doc = (await app.call('GET', '/openapi.json')).body;
      } finally {
        await app.close();
      }
      const declared = declaredResponses(doc);
      const check = schemaChecker(doc);
      const problems: string[] = [];
      let seen = 0;
      for (const [id, byStatus] of Object.entries(report.wire)) {
        const operation = declared.get(id);
        if (!operation) {
          problems.push(`${id}: answered on REST but not in /openapi.json`);
          continue;
        }
        for (const [status, { count, body }] of Object.entries(byStatus)) {
          seen++;
          if (!operation.responses[status]) {
            problems.push(
              `${id}: answered ${status} (${count}×) but declares ${Object.keys(operation.responses).join(', ')}: ${body.slice(0, 200)}`,
            );
            continue;
          }
          let parsed: unknown;
          try {
            parsed = JSON.parse(body);
          } catch {
            problems.push(`${id} ${status}: not JSON: ${body.slice(0, 200)}`);
            continue;
          }
          const problem = check(`${operation.pointer}/${status}/content/application~1json/schema`, parsed);
          if (problem) problems.push(`${id} ${status}: the body breaks the declared schema: ${problem}`);
        }
      }
      t.diagnostic(`${report.tried} calls; ${seen} (operation, status) pairs seen on REST`);
      assert.deepEqual(problems, []);
      assert.ok(Object.keys(report.wire).length > 20, 'most operations were called on REST');
    });
  });
}
