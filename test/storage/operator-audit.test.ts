// The operator audit repository's contract: a row written is stored as given on both engines.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { operatorAudit } from '../../src/storage/operator-audit.ts';
import { engines } from '../support/databases.ts';
import { storageUnderTest } from '../support/storage.ts';

for (const engine of engines) {
  describe(`operator audit repository (${engine.name})`, { skip: engine.skip }, () => {
    const storage = storageUnderTest(engine.name);

    test('a row added is stored whole, and only when its transaction commits', async () => {
      const operator = await storage.member('Olga');
      const row = {
        id: 'aud_1',
        at: 1234,
        operator_id: operator,
        action: 'tier_request.approve',
        target: 'treq_1',
        outcome: 'done',
        detail: '{"tier":"core"}',
      };
      await operatorAudit.add(storage.db, row);
      await storage.db
        .transaction()
        .execute(async (trx) => {
          await operatorAudit.add(trx, { ...row, id: 'aud_2' });
          throw new Error('rolled back');
        })
        .catch(() => {});
      // Read as a fixture: the repository itself only writes.
      const stored = await storage.db.selectFrom('operator_audit').selectAll().execute();
      assert.deepEqual(
        stored.map((r) => ({ ...r, at: Number(r.at) })),
        [row],
      );
    });
  });
}
