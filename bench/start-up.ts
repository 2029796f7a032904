// What a start costs: `serve` on a demo database (seeded once before the rounds, so no round seeds)
// from spawn to its first /healthz answer, the CPU it spent by then and its resident size then, and
// the resident size after the first MCP call (the surface whose SDK loads on first use). With
// BENCH_COMPARE_DIR (another checkout, e.g. `git worktree add /tmp/before REV` with node_modules
// linked) both trees start in interleaved rounds on the same machine and minutes.
// Usage: [BENCH_COMPARE_DIR=/tmp/before] [BENCH_ROUNDS=7] node bench/start-up.ts
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuMicros, mcpToolCall, median, residentMb, startProcess } from './support.ts';

const rounds = Number(process.env.BENCH_ROUNDS ?? 7);
const trees = [{ label: 'this tree', dir: process.cwd() }];
if (process.env.BENCH_COMPARE_DIR) trees.unshift({ label: 'other tree', dir: process.env.BENCH_COMPARE_DIR });

// The checkouts' stripped-source caches are filled before the first round (a first start fills
// its own otherwise, and would count the stripping).
for (const tree of trees)
  spawnSync(process.execPath, ['bin/strip-sources.js'], { cwd: tree.dir, stdio: 'ignore' });

const work = mkdtempSync(join(tmpdir(), 'agent-commons-start-'));
const seeded = join(work, 'seeded.db');
// One seeding start, stopped once it answers: every round copies its database.
{
  const first = await startProcess(
    ['bin/agent-commons.js', 'serve'],
    { DATABASE_URL: `sqlite:${seeded}` },
    '/healthz',
  );
  await first.stop();
}

interface Start {
  ms: number;
  cpuMs: number;
  residentMb: number;
  afterMcpMb: number;
}
const figures = new Map<string, Start[]>(trees.map((tree) => [tree.label, []]));
try {
  for (let round = 1; round <= rounds; round++) {
    for (const tree of round % 2 ? trees : [...trees].reverse()) {
      const database = join(work, `round-${round}-${trees.indexOf(tree)}.db`);
      copyFileSync(seeded, database);
      const started = performance.now();
      const server = await startInTree(tree.dir, database);
      const start: Start = {
        ms: Math.round(performance.now() - started),
        cpuMs: Math.round(cpuMicros(server.child.pid!) / 1000),
        residentMb: residentMb(server.child.pid!),
        afterMcpMb: 0,
      };
      const call = mcpToolCall(`${server.url}/api/mcp`, 'ic_events_list_upcoming', {});
      const answer = await fetch(call.url, call);
      if (answer.status !== 200)
        throw new Error(`MCP call answered ${answer.status}: ${await answer.text()}`);
      start.afterMcpMb = residentMb(server.child.pid!);
      await server.stop();
      figures.get(tree.label)!.push(start);
      console.log(
        `round ${round} ${tree.label}: listening and healthy after ${start.ms} ms, ${start.cpuMs} ms of CPU, ` +
          `${start.residentMb} MB resident; ${start.afterMcpMb} MB after one MCP call`,
      );
    }
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}

for (const [label, starts] of figures) {
  console.log(
    `${label}, medians of ${starts.length}: ${median(starts.map((s) => s.ms))} ms to healthy, ` +
      `${median(starts.map((s) => s.cpuMs))} ms of CPU, ${median(starts.map((s) => s.residentMb))} MB resident, ` +
      `${median(starts.map((s) => s.afterMcpMb))} MB after one MCP call`,
  );
}

/**
 * `serve` from one checkout's directory (its own sources and node_modules), on `database`: the
 * working directory is that checkout's until the server answers, as in bench/compare-revisions.ts.
 */
async function startInTree(dir: string, database: string) {
  const previous = process.cwd();
  process.chdir(dir);
  try {
    return await startProcess(
      ['bin/agent-commons.js', 'serve', '--no-seed'],
      { DATABASE_URL: `sqlite:${database}` },
      '/healthz',
    );
  } finally {
    process.chdir(previous);
  }
}
