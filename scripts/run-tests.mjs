// Runs every test file with node:test through tsx. PostgreSQL suites run when a server is reachable
// (TEST_POSTGRES_URL, or the local default); REQUIRE_POSTGRES=1 makes its absence a failure.
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';

const DEFAULT_POSTGRES = 'postgres://postgres@127.0.0.1:5432/test';

function reachable(url) {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port || 5432) });
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
      if (statSync(path).isDirectory()) return name === 'helpers' ? [] : testFiles(path);
      return name.endsWith('.test.ts') ? [path] : [];
    })
    .sort();
}

const env = { ...process.env };
const postgresUrl = env.TEST_POSTGRES_URL || DEFAULT_POSTGRES;
if (await reachable(postgresUrl)) {
  env.TEST_POSTGRES_URL = postgresUrl;
} else if (env.REQUIRE_POSTGRES === '1') {
  console.error(`REQUIRE_POSTGRES=1 but PostgreSQL is not reachable at ${postgresUrl}`);
  process.exit(1);
} else {
  delete env.TEST_POSTGRES_URL;
  console.log('PostgreSQL not reachable: its suites are reported as skipped.');
}

const files = process.argv.slice(2).length ? process.argv.slice(2) : testFiles('test');
const child = spawn(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-reporter=spec', ...files],
  { stdio: 'inherit', env },
);
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
