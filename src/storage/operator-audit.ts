import type { Executor, OperatorAuditTable } from './schema.ts';

// The operators' audit trail (table operator_audit): one row per operator decision, written in the
// transaction of the change it describes.

export const operatorAudit = {
  async add(executor: Executor, row: OperatorAuditTable): Promise<void> {
    await executor.insertInto('operator_audit').values(row).execute();
  },
};
