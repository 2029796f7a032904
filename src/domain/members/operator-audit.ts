import { randomId } from '../../secrets.ts';
import { operatorAudit } from '../../storage/operator-audit.ts';
import type { Executor } from '../../storage/schema.ts';

export interface AuditEntry {
  operatorId: string;
  action: string;
  target: string;
  detail?: Record<string, unknown>;
}

/**
 * The operator audit row: who did what to which record, and how it went. Written only by the
 * operator operations (src/operations/admin/operator-mutation.ts), inside the transaction of the
 * change it describes, whatever door the call came through: never a change without its row, nor a
 * row for a change that rolled back.
 */
export async function writeAuditRow(
  db: Executor,
  at: number,
  entry: AuditEntry,
  outcome: string,
): Promise<void> {
  await operatorAudit.add(db, {
    id: randomId('aud', 8),
    at,
    operator_id: entry.operatorId,
    action: entry.action,
    target: entry.target,
    outcome,
    detail: JSON.stringify(entry.detail ?? {}),
  });
}
