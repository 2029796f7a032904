// Own code in process: what our own code costs per direct read (the anonymous upcoming list; setup-check
// with a bearer), measured in this process with no socket and no node:http, so it is free of the
// load generator and of the loopback. The req/s rows mix it with node:http's and the kernel's share;
// this figure is the part a change to src/ can move.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { loadConfig } from '../src/config.ts';
import { createDeps } from '../src/deps.ts';
import { compileProxyTrust } from '../src/http/client.ts';
import { OPERATIONS } from '../src/operations/registry.ts';
import { type FrontDoor, frontDoor } from '../src/surfaces/front-door.ts';

const ROUNDS = 5;
const READS_PER_ROUND = 200_000;

/** Median over rounds of the microseconds one direct read of `path` takes in our code. */
export async function ownCodePerRead(
  env: Record<string, string>,
  path = '/api/events/upcoming',
  headers: Record<string, string> = {},
): Promise<number> {
  const deps = await createDeps(loadConfig({ ...process.env, ...env }, { seedDemo: false }));
  const log = { level: 'warn', info() {}, error: (details: unknown) => console.error(details) };
  const reads = frontDoor(deps, OPERATIONS, log, compileProxyTrust(deps.config.trustProxy));
  const { read, status } = directReader(reads, path, headers);
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

/**
 * One direct read of `path` through a front door, as a promise that settles when it is answered,
 * with only what direct reads touch of node's request and response. Every read uses the same
 * request object, and so the same socket, as a kept-alive client's requests do.
 */
export function directReader(
  door: FrontDoor,
  path: string,
  headers: Record<string, string>,
): { read: () => Promise<void>; status: () => number } {
  const request = {
    method: 'GET',
    url: path,
    headers: { host: '127.0.0.1', connection: 'keep-alive', ...headers },
    socket: { remoteAddress: '127.0.0.1' },
  } as unknown as IncomingMessage;
  let answered: () => void = () => {};
  let status = 0;
  const response = {
    headersSent: false,
    writeHead(code: number) {
      status = code;
    },
    end() {
      answered();
    },
    destroy() {},
  } as unknown as ServerResponse;
  const read = () =>
    new Promise<void>((resolve) => {
      answered = resolve;
      if (!door.serve(request, response)) throw new Error(`${path} was not answered directly`);
    });
  return { read, status: () => status };
}
