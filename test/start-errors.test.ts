// A start-up error the operator fixes is one sentence and exit code 1, with no stack trace unless
// asked for (`serve --trace` or DEBUG=1): a port already in use, a bad value, a half-set pair.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { freshDatabase, type TestDatabase } from './support/databases.ts';
import { killAllChildren, runCli } from './support/processes.ts';

let database: TestDatabase;
let taken: Server;
let takenPort: number;

before(async () => {
  database = await freshDatabase('sqlite');
  taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  takenPort = (taken.address() as { port: number }).port;
});
after(async () => {
  await killAllChildren();
  taken.close();
  await database.drop();
});

const STACK_LINE = /^\s+at /m;

function serve(env: Record<string, string>, ...args: string[]) {
  return runCli(database.url, ['serve', ...args], { env: { SEED_DEMO: 'false', ...env } });
}

describe('start-up errors', () => {
  const cases: [string, () => Record<string, string>, RegExp][] = [
    [
      'a port already in use',
      () => ({ PORT: String(takenPort) }),
      /^agent-commons cannot start: 127\.0\.0\.1:\d+ is already in use by another process \(stop it, or set PORT to a free port\)\n$/,
    ],
    [
      'PORT=abc',
      () => ({ PORT: 'abc' }),
      /^agent-commons cannot start: PORT must be an integer >= 0 \(got "abc"\)\n$/,
    ],
    [
      'OIDC_ISSUER without OIDC_CLIENT_ID',
      () => ({ OIDC_ISSUER: 'https://id.example.org' }),
      /^agent-commons cannot start: OIDC_ISSUER and OIDC_CLIENT_ID must be set together\n$/,
    ],
  ];
  for (const [name, env, sentence] of cases) {
    test(`${name}: one sentence, exit code 1, no stack`, async () => {
      const run = await serve(env());
      assert.equal(run.code, 1, run.stderr);
      assert.match(run.stderr, sentence);
      assert.doesNotMatch(run.stderr, STACK_LINE);
    });
  }

  test('--trace and DEBUG=1 add the stack', async () => {
    const [traced, debugged] = await Promise.all([
      serve({ PORT: 'abc' }, '--trace'),
      serve({ PORT: String(takenPort), DEBUG: '1' }),
    ]);
    for (const run of [traced, debugged]) {
      assert.equal(run.code, 1, run.stderr);
      assert.match(run.stderr, /^agent-commons cannot start: /);
      assert.match(run.stderr, STACK_LINE);
    }
  });
});
