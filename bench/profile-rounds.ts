// Whether a dear round of the bearer read is the service's doing or the machine's. node:http's floor
// (setup-check's answer, no work) and the service's bearer read are loaded in turns under wrk while
// the service runs with --cpu-prof; the profile's samples are then cut to each bearer-read round by
// their timestamps (the profile
// and this process read the same monotonic clock). The cheapest and the dearest round are set side
// by side: where our code, node:http and the socket write take the same shares of both, the round
// cost more because the machine ran it slower, not because the service did other work.
// Usage: node bench/profile-rounds.ts  (BENCH_PROFILE_ROUNDS, 6 by default; wrk must be installed)
import {
  benchEnvironment,
  type CpuProfileNode,
  cli,
  mintBenchToken,
  pinLoadGenerator,
  profiledFunction,
  readCpuProfile,
  SECONDS,
  startProcess,
} from './support.ts';
import { WRK_INSTALLED, wrkLoad } from './wrk.ts';

if (!WRK_INSTALLED) throw new Error('wrk is not installed (docs/development.md)');
pinLoadGenerator();
const { dir, env } = benchEnvironment('agent-commons-profile-rounds-');
cli(['migrate'], env);
const { token } = mintBenchToken(env, 'profile', 'read:public,membership:read', false);
const server = await startProcess(
  [
    '--cpu-prof',
    '--cpu-prof-interval=500',
    `--cpu-prof-dir=${dir}`,
    'bin/agent-commons.js',
    'serve',
    '--no-seed',
  ],
  env,
  '/healthz',
);
const hello = await startProcess(['bench/hello-server.mjs'], {}, '/');
const microseconds = () => Number(process.hrtime.bigint() / 1000n);

interface Round {
  round: number;
  from: number;
  to: number;
  floorCpu: number;
  checkCpu: number;
}
const rounds: Round[] = [];
for (let round = 1; round <= Number(process.env.BENCH_PROFILE_ROUNDS ?? 6); round++) {
  const floor = wrkLoad(
    `${round}: node:http floor, setup-check reply`,
    `${hello.url}/setup-check`,
    hello.child.pid!,
  );
  const check = wrkLoad(`${round}: bearer read`, `${server.url}/api/agent/setup-check`, server.child.pid!, {
    authorization: `Bearer ${token}`,
  });
  // The measured load is the last SECONDS of wrkLoad (its unmeasured warm-up runs before it).
  const to = microseconds();
  rounds.push({
    round,
    from: to - SECONDS * 1_000_000,
    to,
    floorCpu: floor.cpuPerRequest!,
    checkCpu: check.cpuPerRequest!,
  });
  console.log(
    `round ${round}: floor ${floor.requestsPerSecond} req/s, ${floor.cpuPerRequest} µs; bearer read ${check.requestsPerSecond} ` +
      `req/s, ${check.cpuPerRequest} µs, p99 ${check.p99} ms`,
  );
}
await hello.stop();
// The profile is written as the server exits.
await server.stop();

const { path, profile } = readCpuProfile(dir);
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
let clock = profile.startTime;
const sampledAt = profile.timeDeltas.map((delta) => (clock += delta));

/** Where a sample's own time went: our sources, a package, Node's own JavaScript, or native code. */
function part({ functionName, url }: CpuProfileNode['callFrame']): string {
  if (url.includes('/src/')) return 'our code (src/)';
  if (url.includes('/node_modules/')) return 'packages';
  if (url.startsWith('node:')) return "Node's JavaScript (node:http and the rest)";
  if (functionName === 'writeUtf8String' || functionName === 'writev') return 'the socket write (native)';
  return `native: ${functionName}`;
}

/** The busy samples of one round, counted by part and by function. */
function shares({ from, to }: Round) {
  const byPart = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let busy = 0;
  profile.samples.forEach((id, index) => {
    if (sampledAt[index] < from || sampledAt[index] > to) return;
    const { callFrame } = nodes.get(id)!;
    if (callFrame.functionName === '(idle)') return;
    busy++;
    const [where, name] = [part(callFrame), profiledFunction(callFrame)];
    byPart.set(where, (byPart.get(where) ?? 0) + 1);
    byFunction.set(name, (byFunction.get(name) ?? 0) + 1);
  });
  return { busy, byPart, byFunction };
}

const byCost = [...rounds].sort((x, y) => x.checkCpu - y.checkCpu);
const [cheap, dear] = [byCost[0], byCost[byCost.length - 1]];
const [cheapShares, dearShares] = [shares(cheap), shares(dear)];
const percent = (count: number | undefined, of: number) => `${((100 * (count ?? 0)) / of).toFixed(1)}%`;
console.log(
  `cheapest round ${cheap.round}: bearer read ${cheap.checkCpu} µs a request (floor ${cheap.floorCpu}); dearest round ` +
    `${dear.round}: ${dear.checkCpu} µs (floor ${dear.floorCpu}). Shares of each round's busy samples:`,
);
const table = (key: 'byPart' | 'byFunction', limit: number) =>
  [...new Set([...cheapShares[key].keys(), ...dearShares[key].keys()])]
    .map((name) => ({
      name,
      cheapest: percent(cheapShares[key].get(name), cheapShares.busy),
      dearest: percent(dearShares[key].get(name), dearShares.busy),
      count: (cheapShares[key].get(name) ?? 0) + (dearShares[key].get(name) ?? 0),
    }))
    .sort((x, y) => y.count - x.count)
    .slice(0, limit)
    .map(({ count: _, ...row }) => row);
console.table(table('byPart', 8));
console.table(table('byFunction', 20));
console.log(`profile: ${path}`);
