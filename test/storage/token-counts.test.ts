// The token tally's contract: the same tokens give the same counts on both engines.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { tokenTally } from '../../src/storage/token-counts.ts';
import { engines } from '../support/databases.ts';
import { storageUnderTest } from '../support/storage.ts';

for (const engine of engines) {
  describe(`token tally (${engine.name})`, { skip: engine.skip }, () => {
    const storage = storageUnderTest(engine.name);

    test('no tokens count as zeros, not as nulls', async () => {
      assert.deepEqual(await tokenTally.of(storage.db, 0), {
        live: 0,
        sandbox: 0,
        revoked: 0,
        active: 0,
        members: 0,
      });
    });

    test('live, sandbox, revoked, recently used and members with a live token', async () => {
      const ada = await storage.member('Ada');
      const bo = await storage.member('Bo');
      const cy = await storage.member('Cy');
      let n = 0;
      // Written as fixture rows: the tokens' own rules are not what this suite tests.
      const token = async (
        memberId: string,
        sandbox: number,
        lastUsedAt: number | null,
        revokedAt: number | null,
      ) => {
        n += 1;
        await storage.db
          .insertInto('tokens')
          .values({
            id: `tok_${n}`,
            member_id: memberId,
            hash: `hash_${n}`,
            prefix: `p${n}`,
            name: `token ${n}`,
            scopes: '[]',
            sandbox,
            source: 'test',
            created_at: 1,
            last_used_at: lastUsedAt,
            revoked_at: revokedAt,
          })
          .execute();
      };
      await token(ada, 0, 500, null);
      await token(ada, 0, 100, null);
      await token(bo, 1, 900, null);
      await token(bo, 0, 900, 950);
      await token(cy, 0, null, 10);
      assert.deepEqual(await tokenTally.of(storage.db, 200), {
        live: 2,
        sandbox: 1,
        revoked: 2,
        active: 2,
        members: 2,
      });
    });
  });
}
