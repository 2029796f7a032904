// The database's probe: it answers on both engines, through the database and inside a transaction.
import { describe, test } from 'node:test';
import { probe } from '../../src/storage/database.ts';
import { engines } from '../support/databases.ts';
import { storageUnderTest } from '../support/storage.ts';

for (const engine of engines) {
  describe(`database probe (${engine.name})`, { skip: engine.skip }, () => {
    const storage = storageUnderTest(engine.name);

    test('an open database answers the probe, inside a transaction too', async () => {
      await probe(storage.db);
      await storage.db.transaction().execute((trx) => probe(trx));
    });
  });
}
