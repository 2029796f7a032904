// What an idle instance holds: the memory its start needed is given back (src/memory-trim.ts), and the
// process that serves never loads Node's type stripper (bin/stripped-sources.js).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import module from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { currentSources, strippedDir } from '../bin/stripped-sources.js';
import { trimMemory, trimWhenIdle } from '../src/memory-trim.ts';
import { killAllChildren, runCli, type ServerProcess, startServer } from './support/processes.ts';
import { waitUntil } from './support/wait.ts';

after(killAllChildren);

const workDir = mkdtempSync(join(tmpdir(), 'memory-'));
after(() => rmSync(workDir, { recursive: true, force: true }));

/** Holds the thread for `ms`, as a request burst would. */
function busyFor(ms: number) {
  const until = performance.now() + ms;
  while (performance.now() < until) JSON.stringify({ at: performance.now() });
}

/** Reports, as the process exits, which Node-internal modules it loaded that match `pattern`. */
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

describe('memory trim', () => {
  test('a memory-reducing collection gives back an emptied young generation', () => {
    // Short-lived garbage grows the young generation, as the start and request bursts do.
    for (let round = 0; round < 40; round++) Array.from({ length: 200_000 }, (_, i) => ({ i }));
    const trimmed = trimMemory();
    assert.ok(trimmed.afterMb < trimmed.beforeMb, `${trimmed.beforeMb} MB → ${trimmed.afterMb} MB`);
    assert.ok(trimmed.ms >= 0);
  });

  test('trims once after a busy spell, once the process has been idle a whole window', async () => {
    const trims: number[] = [];
    const stop = trimWhenIdle(100, () => trims.push(Date.now()));
    try {
      // A busy window, then idle ones: one trim, and no more while idleness lasts.
      await new Promise((resolve) => setTimeout(resolve, 20));
      busyFor(150);
      await waitUntil(() => trims.length === 1, 'the trim after the busy spell', { timeoutMs: 5000 });
      await new Promise((resolve) => setTimeout(resolve, 450));
      assert.equal(trims.length, 1, 'no second trim while nothing happened in between');
      busyFor(150);
      await waitUntil(() => trims.length === 2, 'the trim after the next busy spell', { timeoutMs: 5000 });
    } finally {
      stop();
    }
  });
});

describe('the serving process', () => {
  test('gives back what its start needed, and never loads the type stripper', async () => {
    const loaded = join(workDir, 'loaded.json');
    let server: ServerProcess | undefined;
    try {
      server = await startServer(`sqlite:${join(workDir, 'demo.db')}`, {
        env: { NODE_OPTIONS: `--import=${loadedModulesProbe(loaded)}`, LOG_LEVEL: 'info' },
      });
      const started = server;
      await waitUntil(() => started.stdout().includes('memory trimmed after the start'), 'the start trim');
      const line = started
        .stdout()
        .split('\n')
        .find((text) => text.includes('memory trimmed after the start'));
      const trimmed = JSON.parse(line!) as { beforeMb: number; afterMb: number; ms: number };
      assert.ok(trimmed.afterMb < trimmed.beforeMb, line);
      const resident = Number(
        /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${started.child.pid}/status`, 'utf8'))?.[1],
      );
      assert.ok(
        resident / 1024 < trimmed.beforeMb,
        `resident ${resident} kB after a trim from ${trimmed.beforeMb} MB`,
      );
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
