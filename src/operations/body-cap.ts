import { type ApiError, apiError } from '../core/errors.ts';
import { nestedDeeperThan } from './pipeline/validate.ts';
import type { Deps } from './services.ts';
import type { Operation } from './types.ts';

/** The largest body an operation accepts: its own cap, or BODY_LIMIT_BYTES. */
export function bodyCapOf(op: Operation, deps: Deps): number {
  return op.bodyLimit ?? deps.config.defaultBodyLimit;
}

/** The one 413 every surface answers for a body over its operation's cap. */
export function payloadTooLarge(limit?: number): ApiError {
  return apiError('payload_too_large', { limit, extra: limit === undefined ? undefined : { limit } });
}

/**
 * The operation's REST body cap, held against its arguments on the surfaces that carry several
 * operations in one envelope (MCP, A2A), so a call REST refuses is refused there too. Measuring is
 * skipped when the whole envelope (`envelopeBytes`) is within the cap; arguments nested too deep to
 * measure are left to validation, which refuses them naming the field.
 */
export function argumentsOverCap(
  op: Operation,
  deps: Deps,
  args: unknown,
  envelopeBytes = Number.POSITIVE_INFINITY,
): ApiError | undefined {
  const cap = bodyCapOf(op, deps);
  if (args === undefined || envelopeBytes <= cap || nestedDeeperThan(args)) return undefined;
  return Buffer.byteLength(JSON.stringify(args)) > cap ? payloadTooLarge(cap) : undefined;
}
