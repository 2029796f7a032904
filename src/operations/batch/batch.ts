import { Type } from '@sinclair/typebox';
import { runOperation } from '../../http/pipeline.ts';
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

/** A query string as Fastify hands it to a direct call: repeated names become lists. */
function queryObject(query: string): Record<string, string | string[]> {
  // No prototype: a name like __proto__ is just a name.
  const object: Record<string, string | string[]> = Object.create(null);
  if (query === '') return object;
  for (const [name, value] of new URLSearchParams(query)) {
    const earlier = object[name];
    if (earlier === undefined) object[name] = value;
    else object[name] = Array.isArray(earlier) ? [...earlier, value] : [earlier, value];
  }
  return object;
}

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
    // Each item's body as JSON: the cached serialization when its handler keeps one.
    const bodies: string[] = [];
    for (const item of input.requests) {
      const [pathname, query = ''] = item.path.split('?', 2);
      const op = targets.get(pathname);
      // Plain literals, not spreads: V8 builds spread copies on a slow path (measured: a third of a batch).
      if (!op) {
        const body = {
          error: 'not_batchable',
          error_kind: 'validation',
          message: `Only these reads can be batched: ${[...new Set(targets.values())].map((o) => o.path).join(', ')}.`,
        };
        results.push({ id: item.id, path: item.path, status: 400, ok: false, body });
        bodies.push(JSON.stringify(body));
        continue;
      }
      const answer = await runOperation(
        deps,
        op,
        callWithInput(request, queryObject(query), undefined, true),
      );
      results.push({
        id: item.id,
        path: item.path,
        status: answer.status,
        ok: answer.status < 400,
        body: answer.body,
      });
      bodies.push(answer.json ?? JSON.stringify(answer.body));
    }
    const items = results.map(
      ({ id, path, status, ok }, index) =>
        `{${id === undefined ? '' : `"id":${JSON.stringify(id)},`}"path":${JSON.stringify(path)},"status":${status},"ok":${ok},"body":${bodies[index]}}`,
    );
    const json = `{"ok":true,"count":${results.length},"results":[${items.join(',')}]}`;
    return { body: { ok: true, count: results.length, results }, json };
  },
});
