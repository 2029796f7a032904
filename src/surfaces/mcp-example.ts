/**
 * The MCP calls llms.txt and the reference page show, ready to paste into a shell. The one both
 * show first is tools/list, which needs no token and no prior initialize on the stateless
 * endpoint; the reference page adds a tools/call per tool (call-examples.ts). test/cors.test.ts
 * and test/reference-examples.test.ts run them as printed, so the documents cannot show a call
 * that does not work.
 */
export const MCP_EXAMPLE_BODY = '{"jsonrpc":"2.0","id":1,"method":"tools/list"}';

/** The revision the examples name in MCP-Protocol-Version (the era that needs no initialize here). */
export const MCP_EXAMPLE_PROTOCOL_VERSION = '2025-11-25';

/** A word for the shell inside single quotes (a quote in it is closed, escaped and reopened). */
export function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** The tools/call JSON-RPC request of a tool with these arguments. */
export function mcpToolCallBody(tool: string, args: Record<string, unknown>): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: tool, arguments: args },
  });
}

/** The curl command that posts an MCP request (tools/list unless told), with the token when given. */
export function mcpCurlExample(base: string, body: string = MCP_EXAMPLE_BODY, token?: string): string {
  return [
    `curl -sS -X POST ${base}/api/mcp`,
    `-H 'Content-Type: application/json'`,
    `-H 'Accept: application/json, text/event-stream'`,
    `-H 'MCP-Protocol-Version: ${MCP_EXAMPLE_PROTOCOL_VERSION}'`,
    ...(token ? [`-H ${shellQuote(`Authorization: Bearer ${token}`)}`] : []),
    `-d ${shellQuote(body)}`,
  ].join(' ');
}
