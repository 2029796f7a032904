/**
 * The one MCP call llms.txt and the reference page show, ready to paste into a shell: tools/list,
 * which needs no token and no prior initialize on the stateless endpoint. test/cors.test.ts runs it
 * as printed, so the documents cannot show a call that does not work.
 */
export const MCP_EXAMPLE_BODY = '{"jsonrpc":"2.0","id":1,"method":"tools/list"}';

export function mcpCurlExample(base: string): string {
  return [
    `curl -sS -X POST ${base}/api/mcp`,
    `-H 'Content-Type: application/json'`,
    `-H 'Accept: application/json, text/event-stream'`,
    `-H 'MCP-Protocol-Version: 2025-11-25'`,
    `-d '${MCP_EXAMPLE_BODY}'`,
  ].join(' ');
}
