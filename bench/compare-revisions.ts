// One row served by two checkouts of the service, in interleaved rounds on the same machine and
// minute: this tree and BENCH_COMPARE_DIR (another checkout, e.g. `git worktree add /tmp/before REV`
// with node_modules linked). Row: (b) GET /api/agent/setup-check with a bearer, as in bench/run.ts.
// Usage: BENCH_COMPARE_DIR=/tmp/before [BENCH_ROUNDS=5] node bench/compare-revisions.ts
import { benchEnvironment, cli, load, mintBenchToken, type Server, startProcess } from './support.ts';

const other = process.env.BENCH_COMPARE_DIR;
if (!other) throw new Error('set BENCH_COMPARE_DIR to the other checkout');
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const here = process.cwd();

/** A server of the checkout in `dir`, on a database of its own with one bench token. */
async function serveFrom(
  dir: string,
  label: string,
): Promise<{ server: Server; token: string; label: string }> {
  process.chdir(dir);
  try {
    const { env } = benchEnvironment(`agent-commons-compare-${label}-`);
    cli(['migrate'], env);
    const { token } = mintBenchToken(env, label, 'read:public', false);
    const server = await startProcess(['bin/agent-commons.js', 'serve', '--no-seed'], env, '/healthz');
    return { server, token, label };
  } finally {
    process.chdir(here);
  }
}

const sides = [await serveFrom(other, 'other'), await serveFrom(here, 'this')];
const figures: Record<string, { rps: number; cpu: number }[]> = { other: [], this: [] };
for (let round = 1; round <= rounds; round++) {
  for (const side of round % 2 ? sides : [...sides].reverse()) {
    const result = await load(
      `${round}: (b) ${side.label}`,
      { url: `${side.server.url}/api/agent/setup-check`, headers: { authorization: `Bearer ${side.token}` } },
      side.server.child.pid,
    );
    figures[side.label].push({ rps: result.requestsPerSecond, cpu: result.cpuPerRequest ?? 0 });
    console.log(
      `round ${round} ${side.label}: ${result.requestsPerSecond} req/s, ${result.cpuPerRequest} µs/req`,
    );
  }
}
for (const side of sides) await side.server.stop();
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const [otherRps, thisRps] = [median(figures.other.map((f) => f.rps)), median(figures.this.map((f) => f.rps))];
console.log(
  `(b) medians: ${other} ${otherRps} req/s (${median(figures.other.map((f) => f.cpu))} µs), this tree ${thisRps} req/s ` +
    `(${median(figures.this.map((f) => f.cpu))} µs): ${(((thisRps - otherRps) / otherRps) * 100).toFixed(1)} %`,
);
