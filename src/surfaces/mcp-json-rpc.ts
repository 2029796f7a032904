/** A JSON-RPC error answer with no id, as the MCP endpoint gives it for a refusal before any message is read. */
export function jsonRpcError(status: number, message: string, code = -32000) {
  return { status, body: JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }) };
}
