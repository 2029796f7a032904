// The OAuth authorizations repository's contract: the same calls give the same rows on both engines.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { oauthAuthorizations } from '../../src/storage/oauth-authorizations.ts';
import type { OAuthAuthorizationsTable } from '../../src/storage/schema.ts';
import { engines } from '../support/databases.ts';
import { storageUnderTest } from '../support/storage.ts';

for (const engine of engines) {
  describe(`OAuth authorizations repository (${engine.name})`, { skip: engine.skip }, () => {
    const storage = storageUnderTest(engine.name);
    const request = (id: string, expiresAt: number): OAuthAuthorizationsTable => ({
      id,
      request_hash: `request-${id}`,
      client_id: 'mcpc_a',
      client_name: null,
      redirect_uri: 'https://app.example.org/cb',
      scopes: '["highlights:read"]',
      state: null,
      code_challenge: 'challenge',
      resource: 'https://service.example.org/mcp',
      status: 'pending',
      created_at: 0,
      expires_at: expiresAt,
      bound_session_hash: null,
      member_id: null,
      granted_scopes: null,
      sandbox: 0,
      decided_at: null,
      code_hash: null,
      code_expires_at: null,
      token_id: null,
      exchanged_at: null,
    });
    const byId = async (id: string) =>
      (await oauthAuthorizations.byRequestHash(storage.db, `request-${id}`))!;

    test('a request inserted is found by its hash; an unknown hash is undefined', async () => {
      await oauthAuthorizations.insert(storage.db, request('oaz_a', 100));
      assert.deepEqual(await byId('oaz_a'), request('oaz_a', 100));
      assert.equal(await oauthAuthorizations.byRequestHash(storage.db, 'request-none'), undefined);
      assert.equal(await oauthAuthorizations.byCodeHash(storage.db, 'code-none'), undefined);
    });

    test('bindSession keeps the sign-in it was bound to first and answers it', async () => {
      assert.equal(await oauthAuthorizations.bindSession(storage.db, 'oaz_a', 'ses-1'), 'ses-1');
      assert.equal(await oauthAuthorizations.bindSession(storage.db, 'oaz_a', 'ses-2'), 'ses-1');
    });

    test('decide writes once from the status named; the code then finds the request', async () => {
      const ada = await storage.member('Ada');
      const decision = {
        status: 'approved',
        memberId: ada,
        grantedScopes: '["highlights:read"]',
        sandbox: true,
        decidedAt: 50,
        codeHash: 'code-a',
        codeExpiresAt: 110,
      };
      assert.equal(await oauthAuthorizations.decide(storage.db, 'oaz_a', 'pending', decision), true);
      assert.equal(await oauthAuthorizations.decide(storage.db, 'oaz_a', 'pending', decision), false);
      const row = await oauthAuthorizations.byCodeHash(storage.db, 'code-a');
      assert.deepEqual(
        [
          row?.id,
          row?.status,
          row?.member_id,
          row?.granted_scopes,
          row?.sandbox,
          row?.decided_at,
          row?.code_expires_at,
        ],
        ['oaz_a', 'approved', ada, '["highlights:read"]', 1, 50, 110],
      );
    });

    test('markExchanged wins once; setToken records the token', async () => {
      assert.equal(
        await oauthAuthorizations.markExchanged(storage.db, 'oaz_a', 'approved', 'exchanged', 60),
        true,
      );
      assert.equal(
        await oauthAuthorizations.markExchanged(storage.db, 'oaz_a', 'approved', 'exchanged', 61),
        false,
      );
      await oauthAuthorizations.setToken(storage.db, 'oaz_a', 'tok_1');
      const row = await byId('oaz_a');
      assert.deepEqual([row.status, row.exchanged_at, row.token_id], ['exchanged', 60, 'tok_1']);
    });

    test('deleteExpiredBefore deletes only the requests that ended before the time', async () => {
      await oauthAuthorizations.insert(storage.db, request('oaz_b', 200));
      await oauthAuthorizations.deleteExpiredBefore(storage.db, 200);
      assert.ok(await oauthAuthorizations.byRequestHash(storage.db, 'request-oaz_b'));
      assert.equal(await oauthAuthorizations.byRequestHash(storage.db, 'request-oaz_a'), undefined);
    });
  });
}
