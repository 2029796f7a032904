import { Type } from '@sinclair/typebox';
import { errorBody } from '../../core/error-catalogue.ts';
import { queryInput } from '../../http/client.ts';
import { runOperation } from '../pipeline/run.ts';
import { strictObject } from '../schemas.ts';
import { callWithInput, defineOperation, type Operation } from '../types.ts';

const Item = strictObject({
  id: Type.Optional(
    Type.String({ maxLength: 100, description: 'Echoed in the result, to match answers to requests.' }),
  ),
  method: Type.Literal('GET'),
  path: Type.String({
    minLength: 1,
    maxLength: 2000,
    pattern: '^/',
    description: 'Path and query, e.g. /api/events/upcoming?limit=5',
  }),
});

const Input = strictObject({
  requests: Type.Array(Item, {
    minItems: 1,
    maxItems: 20,
    examples: [[{ id: 'next', method: 'GET', path: '/api/events/upcoming?limit=5' }]],
  }),
});

const Result = Type.Object({
  id: Type.Optional(Type.String()),
  path: Type.String(),
  status: Type.Integer(),
  ok: Type.Boolean(),
  body: Type.Unknown({ description: 'What a direct call would have answered (the Error shape on failure).' }),
});

const Output = Type.Object({ ok: Type.Boolean(), count: Type.Integer(), results: Type.Array(Result) });

const CLOSE_ITEM = Buffer.from('}');
const CLOSE_ANSWER = Buffer.from(']}');

const targetsByRegistry = new WeakMap<readonly Operation[], Map<string, Operation>>();

/** The operations a batch may run, by path and alias: public reads that opted in with `batchable`. */
function batchTargets(operations: readonly Operation[]): Map<string, Operation> {
  let targets = targetsByRegistry.get(operations);
  if (!targets) {
    targets = new Map();
    for (const op of operations) {
      if (!op.batchable || op.method !== 'GET' || !op.path) continue;
      for (const path of [op.path, ...(op.aliases ?? [])]) targets.set(path, op);
    }
    targetsByRegistry.set(operations, targets);
  }
  return targets;
}

export const batchPublicReads = defineOperation<typeof Input.static, typeof Output.static>({
  id: 'batchPublicReads',
  method: 'POST',
  path: '/api/batch',
  tag: 'batch',
  summary: 'Several public reads in one request',
  description:
    'Runs each item through the same pipeline and handler as the direct call, in order, and answers 200 with every item’s own status and body. Allow-listed paths: upcoming events, event lookup, donor wall. Each item counts against the caller’s rate limit like a direct call.',
  credential: 'public',
  sandbox: 'real',
  idempotent: false,
  bodyLimit: 16 * 1024,
  inputFrom: 'body',
  input: Input,
  output: Output,
  successStatus: 200,
  errors: [
    { status: 400, description: 'Invalid body, or not 1 to 20 items' },
    { status: 413, description: 'Body larger than 16 KB' },
  ],
  async handler({ input, deps, request }) {
    const operations = request.operations ?? [];
    const targets = batchTargets(operations);
    const results: (typeof Result.static)[] = [];
    // Each item's body as UTF-8 JSON: the cached bytes when its handler keeps them.
    const bodies: Buffer[] = [];
    for (const item of input.requests) {
      const mark = item.path.indexOf('?');
      const op = targets.get(mark === -1 ? item.path : item.path.slice(0, mark));
      // Plain literals, not spreads: V8 builds spread copies on a slow path (measured: a third of a batch).
      if (!op) {
        const body = errorBody('not_batchable', { paths: [...new Set(targets.values())].map((o) => o.path) });
        results.push({ id: item.id, path: item.path, status: 400, ok: false, body });
        bodies.push(Buffer.from(JSON.stringify(body)));
        continue;
      }
      const query = queryInput(mark === -1 ? '' : item.path.slice(mark + 1));
      const answer = await runOperation(deps, op, callWithInput(request, query, undefined, true));
      results.push({
        id: item.id,
        path: item.path,
        status: answer.status,
        ok: answer.status < 400,
        body: answer.body,
      });
      bodies.push(answer.bytes ?? Buffer.from(JSON.stringify(answer.body)));
    }
    const chunks: Buffer[] = [Buffer.from(`{"ok":true,"count":${results.length},"results":[`)];
    for (const [index, { id, path, status, ok }] of results.entries()) {
      const head = `${index === 0 ? '' : ','}{${id === undefined ? '' : `"id":${JSON.stringify(id)},`}"path":${JSON.stringify(path)},"status":${status},"ok":${ok},"body":`;
      chunks.push(Buffer.from(head), bodies[index], CLOSE_ITEM);
    }
    chunks.push(CLOSE_ANSWER);
    return { body: { ok: true, count: results.length, results }, bytes: Buffer.concat(chunks) };
  },
});
