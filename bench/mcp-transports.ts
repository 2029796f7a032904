// The MCP transport comparison: one tools/call of a cheap read, the upcoming-events
// tool, through our ExchangeTransport (/api/mcp) and through the SDK's own Streamable HTTP
// transport (/api/mcp-sdk), both in one server process (bench/mcp-server.ts), in alternating rounds.
import { type Figures, load, mcpToolCall, startProcess } from './support.ts';

const ROUNDS = Number(process.env.BENCH_MCP_ROUNDS ?? 3);

function toolCall(url: string) {
  return mcpToolCall(url, 'ic_events_list_upcoming', { limit: 5 });
}

/** One call before the load: both answer the events, so neither row can pass on refusals. */
async function expectEvents(label: string, request: ReturnType<typeof toolCall>): Promise<string> {
  const response = await fetch(request.url, request);
  const text = await response.text();
  if (response.status !== 200 || !text.includes('"events"') || text.includes('"isError"'))
    throw new Error(`${label}: ${response.status} ${text}`);
  return text;
}

export interface McpTransportRound {
  ours: Figures;
  sdk: Figures;
}

/** The rows, round by round; the database at `env.DATABASE_URL` is migrated and holds upcoming events. */
export async function mcpTransportRounds(env: Record<string, string>): Promise<McpTransportRound[]> {
  const server = await startProcess(['bench/mcp-server.ts'], env, '/healthz');
  try {
    const ours = toolCall(`${server.url}/api/mcp`);
    const sdk = toolCall(`${server.url}/api/mcp-sdk`);
    if ((await expectEvents('ours', ours)) !== (await expectEvents('sdk', sdk)))
      throw new Error('the two transports answered the same call differently');
    const rounds: McpTransportRound[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      rounds.push({
        ours: await load(`${round}: MCP call, our transport`, ours, server.child.pid),
        sdk: await load(`${round}: MCP call, SDK transport`, sdk, server.child.pid),
      });
    }
    return rounds;
  } finally {
    await server.stop();
  }
}

/** Each round's SDK figures against ours: throughput share and extra server CPU per request. */
export function mcpTransportSummary(rounds: McpTransportRound[]): string {
  const lines = rounds.map(({ ours, sdk }, index) => {
    const share = Math.round((100 * sdk.requestsPerSecond) / ours.requestsPerSecond);
    const cpu =
      ours.cpuPerRequest && sdk.cpuPerRequest
        ? `, server CPU ${ours.cpuPerRequest} → ${sdk.cpuPerRequest} µs/req (${Math.round((100 * (sdk.cpuPerRequest - ours.cpuPerRequest)) / ours.cpuPerRequest)}%)`
        : '';
    return `  round ${index + 1}: SDK ${sdk.requestsPerSecond} req/s against ours ${ours.requestsPerSecond} (${share}%)${cpu}`;
  });
  return [
    'MCP transports, the SDK’s against ours (keep ours only if the SDK is more than ~5% behind):',
    ...lines,
  ].join('\n');
}
