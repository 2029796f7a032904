// One row served by two checkouts of the service, in interleaved rounds on the same machine and
// minute: this tree and BENCH_COMPARE_DIR (another checkout, e.g. `git worktree add /tmp/before REV`
// with node_modules linked). Rows as in bench/run.ts: BENCH_COMPARE_ROW=bearer-read (GET
// /api/agent/setup-check with a bearer, the default), sandbox-write (POST a highlight with a sandbox
// token), durable-write (real highlight writes, a new story id each) or mcp-read (an MCP tools/call of
// ic_activity_get_recent with a bearer, as bench/surfaces.ts sends it).
// Usage: BENCH_COMPARE_DIR=/tmp/before [BENCH_COMPARE_ROW=bearer-read|sandbox-write|durable-write|mcp-read]
//        [BENCH_ROUNDS=5] node bench/compare-revisions.ts
import type autocannon from 'autocannon';
import {
  benchEnvironment,
  cli,
  highlightStory,
  interleavedRounds,
  mcpToolCall,
  mintBenchToken,
  type RoundSide,
  type Server,
  startProcess,
} from './support.ts';

const other = process.env.BENCH_COMPARE_DIR;
if (!other) throw new Error('set BENCH_COMPARE_DIR to the other checkout');
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const here = process.cwd();
const row = process.env.BENCH_COMPARE_ROW ?? 'bearer-read';
const rows: Record<
  string,
  { name: string; scopes: string; sandbox: boolean; request: (token: string) => autocannon.Options }
> = {
  'bearer-read': {
    name: 'bearer read, GET /api/agent/setup-check',
    scopes: 'read:public',
    sandbox: false,
    request: (token) => ({ url: '/api/agent/setup-check', headers: { authorization: `Bearer ${token}` } }),
  },
  'sandbox-write': {
    name: 'sandbox highlight write',
    scopes: 'events:submit_recap,read:public',
    sandbox: true,
    request: (token) => ({
      url: '/api/ingest/highlights/pending',
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: highlightStory('bench-sandbox'),
    }),
  },
  'durable-write': {
    name: 'durable highlight write, SQLite',
    scopes: 'events:submit_recap',
    sandbox: false,
    request: (token) => {
      let sequence = 0;
      return {
        url: '/api/ingest/highlights/pending',
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        requests: [
          { setupRequest: (request) => ({ ...request, body: highlightStory(`compare-${++sequence}`) }) },
        ],
      };
    },
  },
  'mcp-read': {
    name: 'activity read, MCP',
    scopes: 'read:public,membership:read',
    sandbox: false,
    request: (token) => mcpToolCall('/api/mcp', 'ic_activity_get_recent', { limit: 5 }, token),
  },
};
const measured = rows[row];
if (!measured) throw new Error(`BENCH_COMPARE_ROW is ${Object.keys(rows).join(', ')}, not ${row}`);

/** A server of the checkout in `dir`, on a database of its own with one bench token. */
async function serveFrom(
  dir: string,
  label: string,
): Promise<{ server: Server; token: string; label: string }> {
  process.chdir(dir);
  try {
    const { env } = benchEnvironment(`agent-commons-compare-${label}-`);
    cli(['migrate'], env);
    const { token } = mintBenchToken(env, label, measured.scopes, measured.sandbox);
    const server = await startProcess(['bin/agent-commons.js', 'serve', '--no-seed'], env, '/healthz');
    return { server, token, label };
  } finally {
    process.chdir(here);
  }
}

const sides = [await serveFrom(other, 'other'), await serveFrom(here, 'this')];
await interleavedRounds(
  measured.name,
  sides.map((side) => {
    const request = measured.request(side.token);
    return {
      label: side.label,
      server: side.server,
      request: { ...request, url: side.server.url + request.url },
    };
  }) as [RoundSide, RoundSide],
  rounds,
);
for (const side of sides) await side.server.stop();
