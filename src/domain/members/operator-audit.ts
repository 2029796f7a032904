import type { Deps } from '../../deps.ts';
import { randomId } from '../../secrets.ts';

export interface AuditEntry {
  operatorId: string;
  action: string;
  target: string;
  outcome: string;
  detail?: Record<string, unknown>;
}

/** Every operator action from the console leaves a row: who, what, on which record, and how it went. */
export async function recordOperatorAction(deps: Deps, entry: AuditEntry): Promise<void> {
  await deps.db
    .insertInto('operator_audit')
    .values({
      id: randomId('aud', 8),
      at: deps.clock.now(),
      operator_id: entry.operatorId,
      action: entry.action,
      target: entry.target,
      outcome: entry.outcome,
      detail: JSON.stringify(entry.detail ?? {}),
    })
    .execute();
}
