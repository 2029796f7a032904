import type { Deps } from '../operations/services.ts';
import type { CallRequest, Operation } from '../operations/types.ts';
import type { FailureContext, HttpLevel } from './a2a-errors.ts';
import type { A2aVersion } from './a2a-version.ts';

/** The HTTP-free parts of the call: everything the pipeline needs besides the input. */
export type CallTemplate = Omit<CallRequest, 'input' | 'idempotencyKey'>;

/** What every A2A method is given: the app, the caller, and the protocol version of the request. */
export interface MethodContext {
  deps: Deps;
  operations: readonly Operation[];
  call: CallTemplate;
  /** The negotiated protocol version, or the one asked for that this endpoint does not speak. */
  version: A2aVersion | { unsupported: string };
  /** How refusals are shaped for the version, and the 401 challenge. */
  failures: FailureContext;
  /** Set for a single (unbatched) request: the operation's RateLimit headers go on the HTTP reply. */
  rateHeaders?: Record<string, string>;
  /** Set when an entry was refused in a way that also travels at the HTTP level (a 401). */
  httpLevel?: HttpLevel;
}
