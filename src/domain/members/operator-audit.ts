import type { Deps } from '../../deps.ts';
import { randomId } from '../../secrets.ts';
import type { Db, Executor } from '../../storage/schema.ts';

export interface AuditEntry {
  operatorId: string;
  action: string;
  target: string;
  detail?: Record<string, unknown>;
}

async function writeAuditRow(db: Executor, at: number, entry: AuditEntry, outcome: string): Promise<void> {
  await db
    .insertInto('operator_audit')
    .values({
      id: randomId('aud', 8),
      at,
      operator_id: entry.operatorId,
      action: entry.action,
      target: entry.target,
      outcome,
      detail: JSON.stringify(entry.detail ?? {}),
    })
    .execute();
}

/**
 * Runs an operator's action and writes its audit row (who, what, on which record, how it went) in
 * one transaction: there is never a change without its row, nor a row for a change that rolled
 * back. `act` gets the dependencies bound to that transaction and returns the outcome.
 */
export async function auditedAction(
  deps: Deps,
  entry: AuditEntry,
  act: (scoped: Deps) => Promise<string>,
): Promise<string> {
  return deps.db.transaction().execute(async (trx) => {
    const outcome = await act({ ...deps, db: trx as unknown as Db });
    await writeAuditRow(trx, deps.clock.now(), entry, outcome);
    return outcome;
  });
}
