// Profiles one row: the server runs with --cpu-prof while autocannon loads it, and the functions
// with the most self time are printed. BENCH_PROFILE_ROW=setup-check|upcoming|mcp (a bearer
// tools/call of ic_activity_get_recent, as in bench/surfaces.ts)|sandbox (a highlight with a sandbox
// token, the sandbox highlight write)|write (durable highlight writes)|signed (setup-check signed afresh for every
// request, the signed request)|floor (the bearer setup-check plus one bare verification, the
// signed request's floor).
// BENCH_PROFILE_ENGINE=postgres runs the server on a fresh PostgreSQL database (withBenchPostgres)
// instead of the embedded one.
// Usage: node bench/profile-row.ts  (writes the .cpuprofile under the OS temp directory)
import type autocannon from 'autocannon';
import {
  prepareSignedTokens,
  SIGNED_FLOOR_SERVE,
  signedSetupCheck,
  signedSetupCheckUrl,
} from './signed-requests.ts';
import {
  benchEnvironment,
  cli,
  highlightStory,
  load,
  mcpToolCall,
  mintBenchToken,
  profiledFunction,
  readCpuProfile,
  startProcess,
  withBenchPostgres,
} from './support.ts';

const { dir, env: embedded } = benchEnvironment('agent-commons-profile-');
const row = process.env.BENCH_PROFILE_ROW ?? 'setup-check';
const engine = process.env.BENCH_PROFILE_ENGINE ?? 'sqlite';
if (engine !== 'sqlite' && engine !== 'postgres')
  throw new Error(`BENCH_PROFILE_ENGINE=${engine}: sqlite or postgres`);
// withBenchPostgres creates and migrates its database; the embedded one is migrated here.
if (engine === 'postgres') await withBenchPostgres((env) => profileServer(env));
else {
  cli(['migrate'], embedded);
  await profileServer(embedded);
}

async function profileServer(plain: Record<string, string>) {
  const env = { ...plain, NODE_OPTIONS: `--cpu-prof --cpu-prof-interval=100 --cpu-prof-dir=${dir}` };
  const { token } = mintBenchToken(
    { ...env, NODE_OPTIONS: '' },
    'profile',
    row === 'write' || row === 'sandbox' ? 'events:submit_recap' : 'read:public,membership:read',
    row === 'sandbox',
  );
  const signer = row === 'signed' ? await prepareSignedTokens({ ...env, NODE_OPTIONS: '' }) : undefined;
  const serve = row === 'floor' ? SIGNED_FLOOR_SERVE : ['bin/agent-commons.js', 'serve', '--no-seed'];
  const server = await startProcess(serve, env, '/healthz');
  let sequence = 0;
  const requests: Record<
    string,
    {
      path: string;
      method?: 'POST';
      body?: string;
      headers?: Record<string, string>;
      requests?: autocannon.Request[];
    }
  > = {
    'setup-check': { path: '/api/agent/setup-check', headers: { authorization: `Bearer ${token}` } },
    signed: {
      path: '/api/agent/setup-check',
      requests: signer ? [signedSetupCheck(await signedSetupCheckUrl(server.url), signer)] : [],
    },
    floor: {
      path: '/api/agent/setup-check',
      headers: { authorization: `Bearer ${token}`, 'x-bench-verify': '1' },
    },
    upcoming: { path: '/api/events/upcoming' },
    mcp: { path: '/api/mcp', ...mcpToolCall('', 'ic_activity_get_recent', { limit: 5 }, token) },
    sandbox: {
      path: '/api/ingest/highlights/pending',
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: highlightStory('profile-sandbox'),
    },
    write: {
      path: '/api/ingest/highlights/pending',
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      requests: [
        { setupRequest: (request) => ({ ...request, body: highlightStory(`profile-${++sequence}`) }) },
      ],
    },
  };
  const { path, ...request } = requests[row];
  const figures = await load(row, { ...request, url: server.url + path }, server.child.pid);
  console.log(figures);
  await server.stop();
}

const { path, profile } = readCpuProfile(dir);
const self = new Map<string, number>();
let total = 0;
for (const node of profile.nodes) {
  const key = profiledFunction(node.callFrame);
  self.set(key, (self.get(key) ?? 0) + node.hitCount);
  total += node.hitCount;
}
const top = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.TOP ?? 45));
for (const [key, hits] of top) console.log(`${((100 * hits) / total).toFixed(1).padStart(5)}%  ${key}`);
console.log(`profile: ${path}`);
