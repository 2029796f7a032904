// The process that serves never loads Node's type stripper (bin/stripped-sources.js): 18 MB of an idle
// instance's memory.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import module from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { currentSources, strippedDir } from '../bin/stripped-sources.js';
import { killAllChildren, runCli, type ServerProcess, startServer } from './support/processes.ts';

after(killAllChildren);

const workDir = mkdtempSync(join(tmpdir(), 'memory-'));
after(() => rmSync(workDir, { recursive: true, force: true }));

/** A preload that writes, as the process exits, the list of Node's own modules it loaded to `out`. */
function loadedModulesProbe(out: string): string {
  const probe = join(workDir, 'probe.mjs');
  writeFileSync(
    probe,
    `import { writeFileSync } from 'node:fs';
process.on('exit', () => writeFileSync(${JSON.stringify(out)}, JSON.stringify(process.moduleLoadList)));
`,
  );
  return probe;
}

describe('the serving process', () => {
  test('never loads the type stripper, and answers', async () => {
    const loaded = join(workDir, 'loaded.json');
    let server: ServerProcess | undefined;
    try {
      server = await startServer(`sqlite:${join(workDir, 'demo.db')}`, {
        env: { NODE_OPTIONS: `--import=${loadedModulesProbe(loaded)}` },
      });
      const started = server;
      const home = await fetch(`${started.baseUrl}/api/events/upcoming`);
      assert.equal(home.status, 200);
      assert.ok(((await home.json()) as { events: unknown[] }).events.length > 0);
      assert.equal((await started.kill('SIGTERM')).code, 0);
      const modules = JSON.parse(readFileSync(loaded, 'utf8')) as string[];
      assert.ok(modules.length > 100, 'the probe saw the process load its modules');
      assert.deepEqual(
        modules.filter((name) => name.includes('amaro')),
        [],
        'the type stripper stayed out',
      );
    } finally {
      await server?.kill();
    }
  });

  test('every source has its stripped text, as Node would strip it, made again when missing', async () => {
    const sources = currentSources();
    const [someUrl, someDigest] = [...sources][0]!;
    rmSync(join(strippedDir, `${someDigest}.js`), { force: true });
    const help = await runCli('sqlite::memory:', ['--help']);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /serve/);
    assert.ok(sources.size > 100);
    for (const [url, digest] of sources) {
      const stripped = readFileSync(join(strippedDir, `${digest}.js`), 'utf8');
      const source = readFileSync(fileURLToPath(url), 'utf8');
      assert.equal(stripped, module.stripTypeScriptTypes(source, { mode: 'strip' }), url);
      assert.equal(stripped.split('\n').length, source.split('\n').length, `${url}: lines kept in place`);
    }
    assert.ok(sources.has(someUrl));
  });
});
