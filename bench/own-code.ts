// Own code in process: what our own code costs per read (the anonymous upcoming list; setup-check with a
// bearer), measured in this process with no socket, no node:http and no Fastify, so it is free of
// the load generator, of the loopback and of the framework: the request's view built, the pipeline
// run and the REST answer's payload and headers made, as the REST route does. The req/s rows mix it
// with node:http's, Fastify's and the kernel's share; this figure is the part a change to src/ can move.
import { loadConfig } from '../src/config.ts';
import { createDeps } from '../src/deps.ts';
import { queryInput } from '../src/http/client.ts';
import { runOperation } from '../src/operations/pipeline/run.ts';
import { OPERATIONS } from '../src/operations/registry.ts';
import type { Operation } from '../src/operations/types.ts';
import { callRequestFrom, restAnswer } from '../src/surfaces/rest.ts';

const ROUNDS = 5;
const READS_PER_ROUND = 200_000;

/** Median over rounds of the microseconds one read of `path` takes in our code. */
export async function ownCodePerRead(
  env: Record<string, string>,
  path = '/api/events/upcoming',
  headers: Record<string, string> = {},
): Promise<number> {
  const deps = await createDeps(loadConfig({ ...process.env, ...env }, { seedDemo: false }));
  const tree = { OPERATIONS, runOperation, callRequestFrom, restAnswer, queryInput };
  const { read, status } = pipelineReader(tree, deps, path, headers);
  try {
    const rounds: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const started = process.hrtime.bigint();
      for (let i = 0; i < READS_PER_ROUND; i++) await read();
      rounds.push(Number(process.hrtime.bigint() - started) / READS_PER_ROUND / 1000);
      if (status() !== 200) throw new Error(`${path} answered ${status()}`);
    }
    return rounds.sort((x, y) => x - y)[Math.floor(ROUNDS / 2)];
  } finally {
    await deps.close();
  }
}

/** What a reader takes of a source tree (this one, or another checkout's, loaded by path). */
export interface TreeModules {
  OPERATIONS: readonly Operation[];
  runOperation: typeof runOperation;
  callRequestFrom: typeof callRequestFrom;
  restAnswer: typeof restAnswer;
  queryInput: typeof queryInput;
}

/**
 * One GET of `path` as the REST route runs it, without the route: the request's view, the pipeline,
 * the answer's payload and headers. Every read uses the same request object, and so the same
 * connection, as a kept-alive client's requests do.
 */
export function pipelineReader(
  tree: TreeModules,
  deps: Parameters<typeof runOperation>[0],
  path: string,
  headers: Record<string, string>,
): { read: () => Promise<void>; status: () => number } {
  const mark = path.indexOf('?');
  const route = mark === -1 ? path : path.slice(0, mark);
  const op = tree.OPERATIONS.find((candidate) => candidate.path === route && candidate.method === 'GET');
  if (!op) throw new Error(`no GET operation at ${route}`);
  const query = mark === -1 ? '' : path.slice(mark + 1);
  const request = {
    id: 'own-code',
    ip: '127.0.0.1',
    method: 'GET',
    url: path,
    headers: { host: '127.0.0.1', connection: 'keep-alive', ...headers },
    socket: {},
  };
  let status = 0;
  const read = async () => {
    const call = tree.callRequestFrom(request, tree.queryInput(query), tree.OPERATIONS);
    const result = await tree.runOperation(deps, op, call);
    const answerHeaders: string[] = ['x-request-id', request.id];
    tree.restAnswer(result, undefined, undefined, answerHeaders);
    status = result.status;
  };
  return { read, status: () => status };
}
