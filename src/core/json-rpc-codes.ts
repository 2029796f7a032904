/**
 * The codes used, each only for what it means: JSON-RPC's own, A2A's (A2A 1.0 §5.4, the same
 * numbers in 0.3), and for refusals neither defines, application codes outside the range JSON-RPC
 * reserves (-32768…-32000): -31000 minus the HTTP status REST answers (-31403 forbidden).
 */
export const RPC = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internal: -32603,
  taskNotFound: -32001,
  taskNotCancelable: -32002,
  pushNotificationNotSupported: -32003,
  unsupportedOperation: -32004,
  extendedCardNotConfigured: -32007,
  versionNotSupported: -32009,
} as const;

/** The code for an operation's refusal with this HTTP status. */
export function rpcCodeFor(status: number): number {
  if (status === 400) return RPC.invalidParams;
  if (status >= 500) return RPC.internal;
  return -(31000 + status);
}
