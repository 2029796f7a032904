import { createSession, revokeSession } from '../domain/auth/sessions.ts';
import { getMember, normalizeEmail } from '../domain/members/members.ts';
import { runOperation } from '../operations/pipeline/run.ts';
import type { Deps } from '../operations/services.ts';
import type { Operation } from '../operations/types.ts';
import { randomId } from '../secrets.ts';
import { members } from '../storage/members.ts';
import { fail } from './command-helpers.ts';

export const BY_OPTION = [
  '--by <member>',
  'the operator deciding: a member id or email (their tier must grant it)',
] as const;

async function operatorNamed(deps: Deps, by: string) {
  const byId = await getMember(deps.db, by);
  if (byId) return byId;
  const email = normalizeEmail(by);
  if (!email) return undefined;
  return members.byEmail(deps.db, email);
}

/**
 * Runs an operator decision from the shell through its operation (surface `cli`), as the member
 * `--by` names: the command opens a session for that member (it has the database, so it may), runs
 * the operation with it and revokes it. The pipeline then checks that member's tier, and the
 * operation writes the audit row and the member's event-log record as it does for every door;
 * running the command is the confirmation. Prints the refusal and exits 1 when the call is refused.
 */
export async function runAsOperator(
  deps: Deps,
  by: string,
  op: Operation,
  input: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const operator = await operatorNamed(deps, by);
  if (!operator) fail(`no member ${by}: --by names the operator deciding (a member id or email)`);
  const sessionId = await createSession(deps.db, deps.clock, operator.id);
  const defined = Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined));
  let result: Awaited<ReturnType<typeof runOperation>>;
  try {
    result = await runOperation(deps, op, {
      surface: 'cli',
      requestId: randomId('cli', 8),
      ip: 'cli',
      sessionId,
      input: { ...defined, confirm: true },
      log: { error: (details, message) => process.stderr.write(`${message} ${String(details.err ?? '')}\n`) },
      headersUnused: true,
    });
  } finally {
    await revokeSession(deps.db, deps.clock, sessionId);
  }
  const body = result.body as Record<string, unknown>;
  if (result.status >= 400) fail(String(body.message ?? body.error));
  return body;
}
