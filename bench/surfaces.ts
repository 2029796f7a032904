// The activity read: one bearer operation on its three surfaces, on one server, in interleaved
// rounds: REST GET /api/activity/me, MCP tools/call ic_activity_get_recent and A2A tasks/send of the
// same capability, same token, same arguments. BENCH_ONLY=surfaces runs it alone; the full run too.
import { cpuShare, type Figures, load, mcpToolCall, rateShare, report } from './support.ts';

const ROUNDS = Number(process.env.BENCH_SURFACE_ROUNDS ?? 3);
const LIMIT = 5;

interface Call {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
}

function calls(base: string, token: string): { rest: Call; mcp: Call; a2a: Call } {
  const authorization = `Bearer ${token}`;
  return {
    rest: { url: `${base}/api/activity/me?limit=${LIMIT}`, method: 'GET', headers: { authorization } },
    mcp: mcpToolCall(`${base}/api/mcp`, 'ic_activity_get_recent', { limit: LIMIT }, token),
    a2a: {
      url: `${base}/api/a2a`,
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tasks/send',
        params: { capability: 'ic_activity_get_recent', arguments: { limit: LIMIT } },
      }),
    },
  };
}

/** The operation's body as each surface carries it, so the rows are checked to answer the same. */
async function activityOf(label: string, call: Call): Promise<unknown> {
  const response = await fetch(call.url, call);
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${label}: ${response.status} ${text}`);
  const parsed = JSON.parse(text);
  const body = label === 'rest' ? parsed : label === 'mcp' ? parsed.result?.structuredContent : parsed.result;
  if (body?.ok !== true || body.count !== LIMIT) throw new Error(`${label}: ${text}`);
  // The surface the activity was read through is not part of the comparison.
  return JSON.stringify({ ...body, via: undefined });
}

/** A few recorded calls first, so the read returns `LIMIT` real entries on every surface. */
async function recordActivity(base: string, token: string): Promise<void> {
  for (let i = 0; i < LIMIT; i++) {
    const response = await fetch(`${base}/api/a2a`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: i,
        method: 'tasks/send',
        params: { capability: 'ic_get_my_membership', arguments: {} },
      }),
    });
    if (response.status !== 200) throw new Error(`activity seed: ${response.status}`);
    await response.text();
  }
}

export interface SurfaceRound {
  rest: Figures;
  mcp: Figures;
  a2a: Figures;
}

/** `token` holds membership:read; the server at `base` (process `pid`) is up. */
export async function surfaceRounds(base: string, pid: number, token: string): Promise<SurfaceRound[]> {
  await recordActivity(base, token);
  const call = calls(base, token);
  const answers = [
    await activityOf('rest', call.rest),
    await activityOf('mcp', call.mcp),
    await activityOf('a2a', call.a2a),
  ];
  if (new Set(answers).size !== 1)
    throw new Error(`the surfaces answered differently: ${answers.join('\n')}`);
  const rounds: SurfaceRound[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    rounds.push({
      rest: await load(`${round}: activity read, REST`, call.rest, pid),
      mcp: await load(`${round}: activity read, MCP`, call.mcp, pid),
      a2a: await load(`${round}: activity read, A2A`, call.a2a, pid),
    });
  }
  return rounds;
}

/** The rounds' rows, then their summary. */
export function reportSurfaces(rounds: SurfaceRound[]): void {
  report(rounds.flatMap(({ rest, mcp, a2a }) => [rest, mcp, a2a]));
  console.log(surfaceSummary(rounds));
}

/** Each round's MCP and A2A against its REST row: req/s share (the target) and server CPU. */
function surfaceSummary(rounds: SurfaceRound[]): string {
  const lines = rounds.map(
    ({ rest, mcp, a2a }, index) =>
      `  round ${index + 1}: REST ${rest.requestsPerSecond} req/s (${rest.cpuPerRequest} µs); MCP ${rateShare(mcp, rest)}% of REST req/s (${mcp.cpuPerRequest} µs, REST/MCP CPU ${cpuShare(mcp, rest)}); A2A ${rateShare(a2a, rest)}% (${a2a.cpuPerRequest} µs, REST/A2A CPU ${cpuShare(a2a, rest)})`,
  );
  return ['surfaces, one bearer read (targets: MCP >= 50%, A2A >= 60% of REST):', ...lines].join('\n');
}
