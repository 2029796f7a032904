// Runs every test file with node:test, Node stripping their types. PostgreSQL and Redis suites run when a server is
// reachable (TEST_POSTGRES_URL / TEST_REDIS_URL, or the local defaults); REQUIRE_POSTGRES=1 and
// REQUIRE_REDIS=1 (set by .ci/run) make an absent server a failure instead of a skip.
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { basename, join } from 'node:path';
import { assertSupportedNode } from '../bin/supported-node.js';

assertSupportedNode();

const DEFAULT_POSTGRES = 'postgres://postgres@127.0.0.1:5432/test';
const DEFAULT_REDIS = 'redis://127.0.0.1:6379';

function reachable(url, defaultPort) {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port || defaultPort) });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

function testFiles(dir) {
  return readdirSync(dir)
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return testFiles(path);
      return name.endsWith('.test.ts') ? [path] : [];
    })
    .sort();
}

const env = { ...process.env };
// Every test file's process and every server a test starts compile the same modules: Node's compile
// cache keeps them between processes (about a quarter of a core-second less for each; CI's time is
// CPU-bound, docs/development.md "Tests"). Node keeps one cache per version under this directory.
env.NODE_COMPILE_CACHE ??= join(process.cwd(), '.cache', 'compile-cache');

async function detect(name, variable, fallback, defaultPort, requirement) {
  const url = env[variable] || fallback;
  if (await reachable(url, defaultPort)) {
    env[variable] = url;
  } else if (env[requirement] === '1') {
    console.error(`${requirement}=1 but ${name} is not reachable at ${url}`);
    process.exit(1);
  } else {
    delete env[variable];
    console.log(`${name} not reachable: its suites are reported as skipped.`);
  }
}

await detect('PostgreSQL', 'TEST_POSTGRES_URL', DEFAULT_POSTGRES, 5432, 'REQUIRE_POSTGRES');
await detect('Redis', 'TEST_REDIS_URL', DEFAULT_REDIS, 6379, 'REQUIRE_REDIS');

// The longest files first (a few seconds to two minutes each, measured on the 2-core CI machine), so
// the two workers finish together: in alphabetical order the Chromium pages file (over two minutes)
// started late and the suite waited on it alone.
const LONGEST_FIRST = [
  'pages-accessibility',
  'scale-reads',
  'payments-recovery',
  'faults',
  'fuzz',
  'cli',
  'drain',
  'durability',
  'backup',
];
const rank = (path) => {
  const index = LONGEST_FIRST.indexOf(basename(path, '.test.ts'));
  return index === -1 ? LONGEST_FIRST.length : index;
};
const files = process.argv.slice(2).length
  ? process.argv.slice(2)
  : testFiles('test').sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
// The service's sources load pre-stripped, as the CLI loads them; Node strips the test files.
const child = spawn(
  process.execPath,
  [
    '--import',
    './test/support/stripped-sources.mjs',
    '--import',
    './test/support/no-network.ts',
    '--test',
    '--test-concurrency=2',
    '--test-reporter=spec',
    ...files,
  ],
  { stdio: 'inherit', env },
);
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
