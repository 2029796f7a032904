// The supported Node.js lines (22 from 22.18, 24, 26): the garbage-collection abort of better-sqlite3 12 on
// Node 24.19+ stays gone, and an older Node gets one clear sentence instead of a crash.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import SQLite from 'better-sqlite3';
import { freshDatabase } from './support/databases.ts';
import { ROOT } from './support/processes.ts';

const CHURN = fileURLToPath(new URL('./support/gc-churn.ts', import.meta.url));
const SUPPORTED = fileURLToPath(new URL('../bin/supported-node.js', import.meta.url));

describe(`runtime (Node ${process.versions.node})`, () => {
  const cleanups: (() => Promise<void>)[] = [];
  after(() => Promise.all(cleanups.map((cleanup) => cleanup())));

  test('statements dropped and collected between requests, in threads and at exit: the process exits 0', async () => {
    const database = await freshDatabase('sqlite');
    cleanups.push(() => database.drop());
    const run = spawnSync(process.execPath, ['--expose-gc', CHURN, database.url], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...process.env, NODE_OPTIONS: '', NODE_TEST_CONTEXT: '' },
    });
    assert.equal(run.signal, null, `killed by ${run.signal}: ${run.stderr}`);
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /gc-churn: done/);
    assert.doesNotMatch(run.stderr, /Assertion failed/);
  });

  test('an unsupported Node is refused at start with the supported lines named', () => {
    const script = `import(${JSON.stringify(SUPPORTED)}).then((m) => m.assertSupportedNode('20.20.2'))`;
    const run = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    assert.equal(run.status, 1);
    assert.match(
      run.stderr,
      /needs Node\.js 22\.18 or newer \(supported lines: 22 \(22\.18 or newer\), 24 and 26\); this is Node\.js 20\.20\.2/,
    );
    const before = spawnSync(process.execPath, ['-e', script.replace('20.20.2', '22.17.1')], {
      encoding: 'utf8',
    });
    assert.equal(before.status, 1, 'a 22 release that needs a flag to strip types is refused');
    assert.match(before.stderr, /needs Node\.js 22\.18 or newer.*this is Node\.js 22\.17\.1/);
    for (const version of ['22.18.0', '24.21.0', '26.10.0']) {
      const ok = spawnSync(process.execPath, ['-e', script.replace('20.20.2', version)], {
        encoding: 'utf8',
      });
      assert.equal(ok.status, 0, `${version}: ${ok.stderr}`);
    }
  });

  test('the CLI runs its TypeScript with plain node, and refuses in a sentence where stripping is off', async () => {
    const database = await freshDatabase('sqlite');
    cleanups.push(() => database.drop());
    const env = { ...process.env, NODE_OPTIONS: '', NODE_TEST_CONTEXT: '', DATABASE_URL: database.url };
    const cli = (flags: string[], args: string[]) =>
      spawnSync(process.execPath, [...flags, 'bin/agent-commons.js', ...args], {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 60_000,
        env,
      });
    const migrated = cli([], ['migrate']);
    assert.equal(migrated.status, 0, migrated.stderr);
    const created = cli(
      [],
      ['member', 'create', '--email', 'strip@example.org', '--name', 'Strip', '--tier', 'core', '--json'],
    );
    assert.equal(created.status, 0, created.stderr);
    const unstripped = cli(['--no-experimental-strip-types'], ['--help']);
    assert.equal(unstripped.status, 1);
    assert.match(unstripped.stderr, /type stripping, which this process has switched off/);
    assert.doesNotMatch(unstripped.stderr, /ERR_/);
    for (const run of [migrated, created]) assert.doesNotMatch(run.stderr, /ExperimentalWarning|ERR_/);
    const member = JSON.parse(created.stdout);
    const sqlite = new SQLite(database.url.slice('sqlite:'.length), { readonly: true });
    try {
      const stored = sqlite.prepare('select email, tier from members where id = ?').get(member.id);
      assert.deepEqual(stored, { email: 'strip@example.org', tier: 'core' });
    } finally {
      sqlite.close();
    }
  });
});
