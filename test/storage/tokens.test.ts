// The tokens repository's contract: the same calls give the same rows on both engines.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { tokens } from '../../src/storage/tokens.ts';
import { engines } from '../support/databases.ts';
import { storageUnderTest } from '../support/storage.ts';

for (const engine of engines) {
  describe(`tokens repository (${engine.name})`, { skip: engine.skip }, () => {
    const storage = storageUnderTest(engine.name);
    const row = (id: string, memberId: string, createdAt: number) => ({
      id,
      member_id: memberId,
      hash: `hash-${id}`,
      prefix: `ac_${id}`,
      name: `token ${id}`,
      scopes: '["highlights:read"]',
      sandbox: 0,
      source: 'cli',
      created_at: createdAt,
      last_used_at: null,
      revoked_at: null,
    });
    let ada: string;
    let bo: string;

    test('a token inserted is found by its hash with its member; an unknown hash finds none', async () => {
      ada = await storage.member('Ada');
      bo = await storage.member('Bo');
      await tokens.insert(storage.db, row('tok_a', ada, 10));
      await tokens.insert(storage.db, row('tok_b', ada, 30));
      await tokens.insert(storage.db, row('tok_c', bo, 20));
      const found = await tokens.withMemberByHash(storage.db, 'hash-tok_a');
      assert.equal(found.length, 1);
      assert.deepEqual(
        { ...found[0], email: undefined },
        {
          token_id: 'tok_a',
          prefix: 'ac_tok_a',
          scopes: '["highlights:read"]',
          sandbox: 0,
          created_at: 10,
          last_used_at: null,
          revoked_at: null,
          signing_key_id: null,
          signing_key_x: null,
          signing_enforced: 0,
          member_id: ada,
          name: 'Ada',
          email: undefined,
          tier: 'member',
        },
      );
      assert.deepEqual(await tokens.withMemberByHash(storage.db, 'hash-none'), []);
    });

    test('newestFirst lists every token or one member’s, newest first', async () => {
      const ids = (rows: { id: string }[]) => rows.map((token) => token.id);
      assert.deepEqual(ids(await tokens.newestFirst(storage.db)), ['tok_b', 'tok_c', 'tok_a']);
      assert.deepEqual(ids(await tokens.newestFirst(storage.db, ada)), ['tok_b', 'tok_a']);
      assert.deepEqual(await tokens.newestFirst(storage.db, 'mem_none'), []);
    });

    test('setLastUsed records the use; revoke is true once, then false', async () => {
      await tokens.setLastUsed(storage.db, 'tok_a', 50);
      assert.equal((await tokens.withMemberByHash(storage.db, 'hash-tok_a'))[0].last_used_at, 50);
      assert.equal(await tokens.revoke(storage.db, 'tok_a', 60), true);
      assert.equal(await tokens.revoke(storage.db, 'tok_a', 70), false);
      assert.equal(await tokens.revoke(storage.db, 'tok_none', 70), false);
      assert.equal((await tokens.withMemberByHash(storage.db, 'hash-tok_a'))[0].revoked_at, 60);
      const owner = await tokens.ownerOf(storage.db, 'tok_a');
      assert.deepEqual(
        owner && { ...owner, sandbox: Number(owner.sandbox), last_used_at: Number(owner.last_used_at) },
        { prefix: 'ac_tok_a', member_id: ada, sandbox: 0, last_used_at: 50 },
      );
      assert.equal(await tokens.ownerOf(storage.db, 'tok_none'), undefined);
    });

    test('a signing key binds once, clears, and enforcement is set', async () => {
      const key = { id: 'kid_one', x: 'x-one' };
      assert.equal(await tokens.bindSigningKey(storage.db, 'tok_b', key, 80), true);
      assert.equal(
        await tokens.bindSigningKey(storage.db, 'tok_b', { id: 'kid_two', x: 'x-two' }, 90),
        false,
      );
      assert.deepEqual(await tokens.signingState(storage.db, ada, 'tok_b'), {
        id: 'tok_b',
        prefix: 'ac_tok_b',
        member_id: ada,
        revoked_at: null,
        signing_key_id: 'kid_one',
        signing_key_x: 'x-one',
        signing_key_bound_at: 80,
        signing_enforced: 0,
      });
      assert.equal(await tokens.signingState(storage.db, bo, 'tok_b'), undefined);
      await tokens.setSigningEnforced(storage.db, 'tok_b', true);
      assert.equal((await tokens.signingState(storage.db, ada, 'tok_b'))?.signing_enforced, 1);
      await tokens.clearSigningKey(storage.db, 'tok_b');
      const cleared = await tokens.signingState(storage.db, ada, 'tok_b');
      assert.deepEqual(
        [
          cleared?.signing_key_id,
          cleared?.signing_key_x,
          cleared?.signing_key_bound_at,
          cleared?.signing_enforced,
        ],
        [null, null, null, 1],
      );
      await tokens.setSigningEnforced(storage.db, 'tok_b', false);
      const states = await tokens.signingStates(storage.db, ada);
      assert.deepEqual(states.map((state) => state.id).sort(), ['tok_a', 'tok_b']);
      assert.equal(states.find((state) => state.id === 'tok_b')?.signing_enforced, 0);
      assert.equal(states.find((state) => state.id === 'tok_a')?.revoked_at, 60);
    });
  });
}
