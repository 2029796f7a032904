// The upcoming-events list on both MCP eras beside REST, in interleaved rounds on one server: REST
// GET /api/events/upcoming with a bearer, MCP tools/call ic_events_list_upcoming at 2025-11-25
// (the pooled SDK servers) and at 2026-07-28 (our dispatcher, src/surfaces/mcp-modern.ts), same
// token, same arguments. Read each era as its share of REST's req/s within a round: on a loaded
// machine the rounds move together, the shares much less. BENCH_ONLY=surfaces runs it; the full run too.
import {
  cpuShare,
  type Figures,
  load,
  mcpModernToolCall,
  mcpToolCall,
  rateShare,
  report,
} from './support.ts';

const ROUNDS = Number(process.env.BENCH_SURFACE_ROUNDS ?? 3);
const LIMIT = 5;
const TOOL = 'ic_events_list_upcoming';

interface Call {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
}

export interface McpEraRound {
  rest: Figures;
  legacy: Figures;
  modern: Figures;
}

function calls(base: string, token: string): Record<keyof McpEraRound, Call> {
  return {
    rest: {
      url: `${base}/api/events/upcoming?limit=${LIMIT}`,
      method: 'GET',
      headers: { authorization: `Bearer ${token}` },
    },
    legacy: mcpToolCall(`${base}/api/mcp`, TOOL, { limit: LIMIT }, token),
    modern: mcpModernToolCall(`${base}/api/mcp`, TOOL, { limit: LIMIT }, token),
  };
}

/** The list as each carries it, so the rows are checked to answer the same (and not with refusals). */
async function eventsOf(label: keyof McpEraRound, call: Call): Promise<string> {
  const response = await fetch(call.url, call);
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${label}: ${response.status} ${text}`);
  const parsed = JSON.parse(text);
  const body = label === 'rest' ? parsed : parsed.result?.structuredContent;
  if (body?.ok !== true || body.count !== LIMIT) throw new Error(`${label}: ${text}`);
  return JSON.stringify(body.events);
}

/** `token` holds events:read_upcoming; the server at `base` (process `pid`) is up and has upcoming events. */
export async function mcpEraRounds(base: string, pid: number, token: string): Promise<McpEraRound[]> {
  const call = calls(base, token);
  const answers = [
    await eventsOf('rest', call.rest),
    await eventsOf('legacy', call.legacy),
    await eventsOf('modern', call.modern),
  ];
  if (new Set(answers).size !== 1) throw new Error(`REST and the MCP eras answered differently`);
  const rounds: McpEraRound[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    rounds.push({
      rest: await load(`${round}: upcoming events, REST (bearer)`, call.rest, pid),
      legacy: await load(`${round}: upcoming events, MCP 2025-11-25`, call.legacy, pid),
      modern: await load(`${round}: upcoming events, MCP 2026-07-28`, call.modern, pid),
    });
  }
  return rounds;
}

/** The rounds' rows, then each era's share of the same round's REST req/s and the server CPU a call. */
export function reportMcpEras(rounds: McpEraRound[]): void {
  report(rounds.flatMap(({ rest, legacy, modern }) => [rest, legacy, modern]));
  const lines = rounds.map(
    ({ rest, legacy, modern }, index) =>
      `  round ${index + 1}: REST ${rest.requestsPerSecond} req/s (${rest.cpuPerRequest} µs); MCP 2025-11-25 ${rateShare(legacy, rest)}% of REST req/s (${legacy.cpuPerRequest} µs, REST/MCP CPU ${cpuShare(legacy, rest)}); MCP 2026-07-28 ${rateShare(modern, rest)}% (${modern.cpuPerRequest} µs, REST/MCP CPU ${cpuShare(modern, rest)})`,
  );
  console.log(
    ['upcoming events, MCP tools/call on each era against the bearer REST read:', ...lines].join('\n'),
  );
}
