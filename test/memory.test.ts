// What an idle instance holds: the serving process never loads Node's type stripper
// (bin/stripped-sources.js) nor the libraries of features nobody has used yet (the MCP SDK,
// markdown-it, the XML builder, prom-client, x402), and once idle it gives back what its start grew
// (src/memory-trim.ts, MEMORY_TRIM_IDLE_MS).
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import module from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { currentSources, strippedDir } from '../bin/stripped-sources.js';
import { loadConfig } from '../src/config.ts';
import { trimMemory, trimWhenIdle } from '../src/memory-trim.ts';
import { killAllChildren, runCli, type ServerProcess, startServer } from './support/processes.ts';
import { waitUntil } from './support/wait.ts';

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

/**
 * A preload that records every package module the process resolves, and writes their package names
 * to `out` on SIGUSR2 and again as the process exits.
 */
function packagesProbe(out: string): string {
  const probe = join(workDir, 'packages-probe.mjs');
  writeFileSync(
    probe,
    `import { renameSync, writeFileSync } from 'node:fs';
import module from 'node:module';
const packages = new Set();
module.registerHooks({
  resolve(specifier, context, next) {
    const resolved = next(specifier, context);
    const match = /node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(resolved.url);
    if (match) packages.add(match[1]);
    return resolved;
  },
});
// Written aside and renamed: the test waits for the file to exist, and must never read it half written.
const write = () => {
  writeFileSync(${JSON.stringify(`${out}.part`)}, JSON.stringify([...packages]));
  renameSync(${JSON.stringify(`${out}.part`)}, ${JSON.stringify(out)});
};
process.on('SIGUSR2', write);
process.on('exit', write);
`,
  );
  return probe;
}

/** Holds the thread for `ms`, as a request burst would. */
function busyFor(ms: number) {
  const until = performance.now() + ms;
  while (performance.now() < until) JSON.stringify({ at: performance.now() });
}

function residentMb(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
}

describe('memory trim', () => {
  test('one memory-reducing collection: the young generation is at its minimum right after', () => {
    // Grow the young generation first, as a start or a burst does: objects that survive collections.
    const kept: unknown[] = [];
    for (let i = 0; i < 400_000; i++) kept.push({ i, text: `item ${i}` });
    const trimmed = trimMemory();
    assert.ok(kept.length > 0 && trimmed.residentMb > 0, JSON.stringify(trimmed));
    assert.ok(trimmed.youngBeforeMb >= 4, JSON.stringify(trimmed));
    assert.ok(trimmed.youngAfterMb <= 2, JSON.stringify(trimmed));
    assert.ok(trimmed.ms >= 0);
  });

  // Windows of a second: what V8 does on this thread right after a collection (a few tens of
  // milliseconds, stretched on a loaded machine) stays far under a fifth of one, as it does under
  // the 30 s default; with 200 ms windows it made the window after a trim look busy on a loaded CI.
  const WINDOW_MS = 1000;

  test('trims once after a busy spell, once the process has been idle a whole window', async () => {
    // Past the previous test's collection and its aftermath.
    await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
    const trims: number[] = [];
    const stop = trimWhenIdle(WINDOW_MS, () => trims.push(Date.now()), { busyAtStart: false });
    try {
      // Idle windows with nothing before them: no trim. Then a busy window, then idle ones: one trim,
      // and no more while idleness lasts.
      await new Promise((resolve) => setTimeout(resolve, 2.5 * WINDOW_MS));
      assert.equal(trims.length, 0, 'nothing to trim before any busy spell');
      busyFor(WINDOW_MS / 2);
      await waitUntil(() => trims.length === 1, 'the trim after the busy spell', {
        timeoutMs: 6 * WINDOW_MS,
      });
      await new Promise((resolve) => setTimeout(resolve, 3.5 * WINDOW_MS));
      assert.equal(trims.length, 1, 'no second trim while nothing happened in between');
      busyFor(WINDOW_MS / 2);
      await waitUntil(() => trims.length === 2, 'the trim after the next busy spell', {
        timeoutMs: 6 * WINDOW_MS,
      });
    } finally {
      stop();
    }
  });

  test('the start counts as a busy spell: the first idle window trims', async () => {
    const trims: number[] = [];
    const stop = trimWhenIdle(WINDOW_MS, () => trims.push(Date.now()), { busyAtStart: true });
    try {
      await waitUntil(() => trims.length === 1, 'the trim after the start', { timeoutMs: 6 * WINDOW_MS });
      await new Promise((resolve) => setTimeout(resolve, 2.5 * WINDOW_MS));
      assert.equal(trims.length, 1, 'once');
    } finally {
      stop();
    }
  });

  test('on by default (30 s); a server gives back what its start grew once idle, and not with 0', async () => {
    assert.equal(loadConfig({}).memoryTrimIdleMs, 30_000);
    const servers: ServerProcess[] = [];
    try {
      const [trimming, keeping] = await Promise.all(
        (
          [
            { MEMORY_TRIM_IDLE_MS: '2000', LOG_LEVEL: 'info' },
            { MEMORY_TRIM_IDLE_MS: '0', LOG_LEVEL: 'info' },
          ] as Record<string, string>[]
        ).map((env, i) =>
          startServer(`sqlite:${join(workDir, `trim-${i}.db`)}`, { env }).then((server) => {
            servers.push(server);
            return server;
          }),
        ),
      );
      const trimLine = () =>
        trimming
          .stdout()
          .split('\n')
          .find((text) => text.includes('memory trimmed while idle'));
      await waitUntil(() => trimLine() !== undefined, 'the trim once idle', { timeoutMs: 30_000 });
      const trimmed = JSON.parse(trimLine()!) as {
        residentMb: number;
        youngBeforeMb: number;
        youngAfterMb: number;
      };
      assert.ok(trimmed.youngBeforeMb >= 16, trimLine());
      assert.ok(trimmed.youngAfterMb <= 2, trimLine());
      // The pages leave with the collection or within seconds of it.
      await waitUntil(
        () => residentMb(trimming.child.pid!) < trimmed.residentMb - 20,
        `the resident size to fall from ${trimmed.residentMb} MB`,
        { timeoutMs: 30_000, everyMs: 500 },
      );
      assert.ok(!keeping.stdout().includes('memory trimmed'), 'MEMORY_TRIM_IDLE_MS=0: never');
      const answer = await fetch(`${trimming.baseUrl}/api/events/upcoming`);
      assert.equal(answer.status, 200);
    } finally {
      await Promise.all(servers.map((server) => server.kill()));
    }
  });
});

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

  test('loads the MCP SDK, markdown-it and the XML builder at the first use of their feature, prom-client and x402 only where metrics and payments are on', async () => {
    const loaded = join(workDir, 'packages.json');
    let server: ServerProcess | undefined;
    try {
      server = await startServer(`sqlite:${join(workDir, 'lazy.db')}`, {
        env: { NODE_OPTIONS: `--import=${packagesProbe(loaded)}` },
      });
      const started = server;
      const upcoming = await fetch(`${started.baseUrl}/api/events/upcoming`);
      assert.equal(upcoming.status, 200);
      started.child.kill('SIGUSR2');
      await waitUntil(() => existsSync(loaded), 'the probe to write what was loaded');
      const atStart = JSON.parse(readFileSync(loaded, 'utf8')) as string[];
      assert.ok(atStart.includes('fastify') && atStart.includes('kysely'), 'the probe saw the packages');
      const lazy = ['@modelcontextprotocol/sdk', 'markdown-it', 'fast-xml-parser'];
      const off = ['prom-client', '@x402/core', '@x402/evm'];
      assert.deepEqual(
        atStart.filter((name) => [...lazy, ...off, 'zod'].includes(name)),
        [],
      );

      const mcp = await fetch(`${started.baseUrl}/api/mcp`, {
        method: 'POST',
        headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      assert.equal(mcp.status, 200);
      const listed = (await mcp.json()) as { result: { tools: { name: string }[] } };
      assert.ok(listed.result.tools.some((tool) => tool.name === 'ic_events_list_upcoming'));
      const discovery = await fetch(`${started.baseUrl}/discovery/resources`);
      assert.deepEqual(((await discovery.json()) as { items: unknown[] }).items, []);
      const feed = await fetch(`${started.baseUrl}/newsletter/feed.xml`);
      assert.equal(feed.status, 200);
      assert.match(
        await feed.text(),
        /^<\?xml version="1.0" encoding="utf-8"\?>\n<feed xmlns="http:\/\/www.w3.org\/2005\/Atom">/,
      );
      assert.equal((await started.kill('SIGTERM')).code, 0);
      const atExit = JSON.parse(readFileSync(loaded, 'utf8')) as string[];
      assert.deepEqual(
        lazy.filter((name) => !atExit.includes(name)),
        [],
        'each loaded once its feature was used',
      );
      assert.deepEqual(
        atExit.filter((name) => off.includes(name)),
        [],
        'metrics and payments are off here (and the discovery list asked is empty): never loaded',
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
