import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createSession, SESSION_COOKIE } from '../src/domain/auth/sessions.ts';
import { keyIdOf } from '../src/domain/auth/signing-keys.ts';
import { readEvents } from '../src/domain/eventlog/eventlog.ts';
import type { Member } from '../src/domain/members/members.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';

/** A fresh Ed25519 key pair; the public half as the JWK registration takes. */
export function ed25519Jwk() {
  const { publicKey } = generateKeyPairSync('ed25519');
  const { kty, crv, x } = publicKey.export({ format: 'jwk' }) as { kty: 'OKP'; crv: 'Ed25519'; x: string };
  return { kty, crv, x };
}

for (const engine of engines) {
  describe(`signing-key operations (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine: engine.name });
    });
    after(() => t?.close());

    async function sessionOf(member: Member) {
      return { cookie: `${SESSION_COOKIE}=${await createSession(t.deps.db, t.clock, member.id)}` };
    }

    async function tokenRow(prefix: string) {
      const rows = await t.deps.db
        .selectFrom('tokens')
        .select(['id', 'prefix', 'signing_key_id', 'signing_key_x', 'signing_enforced'])
        .execute();
      const row = rows.find((r) => prefix.startsWith(r.prefix));
      assert.ok(row, 'the token row');
      return row;
    }

    test('register, refuse a second key, toggle enforcement, revoke: each stored and logged', async () => {
      const member = await t.member('member', 'Kim');
      const token = await t.token(member, ['membership:read']);
      const row = await tokenRow(token);
      const headers = await sessionOf(member);
      const jwk = ed25519Jwk();

      const enforceFirst = await t.call('POST', '/api/agent/keys/enforce-toggle', {
        headers,
        body: { token_id: row.id },
      });
      assert.equal(enforceFirst.status, 409);
      assert.equal(enforceFirst.body.error, 'no_signing_key');

      const registered = await t.call('POST', '/api/agent/keys/register', {
        headers,
        body: { token_id: row.id, jwk },
      });
      assert.equal(registered.status, 200, registered.text);
      assert.equal(registered.body.key_id, keyIdOf(jwk.x));
      assert.equal(registered.body.enforced, false);
      assert.match(registered.body.thumbprint, /^[A-Za-z0-9_-]{43}$/);
      let stored = await tokenRow(token);
      assert.equal(stored.signing_key_id, keyIdOf(jwk.x));
      assert.equal(stored.signing_key_x, jwk.x);

      const again = await t.call('POST', '/api/agent/keys/register', {
        headers,
        body: { token_id: row.id, jwk: ed25519Jwk() },
      });
      assert.equal(again.status, 409);
      assert.equal(again.body.error, 'key_already_bound');
      assert.equal((await tokenRow(token)).signing_key_x, jwk.x, 'the first key stays');

      const enforced = await t.call('POST', '/api/agent/keys/enforce-toggle', {
        headers,
        body: { token_id: row.id },
      });
      assert.equal(enforced.status, 200);
      assert.equal(enforced.body.enforced, true);
      assert.equal(Number((await tokenRow(token)).signing_enforced), 1);

      const revoked = await t.call('POST', '/api/agent/keys/revoke', { headers, body: { token_id: row.id } });
      assert.equal(revoked.status, 200);
      assert.deepEqual(
        {
          revoked: revoked.body.revoked,
          id: revoked.body.revoked_key_id,
          key: revoked.body.key_id,
          on: revoked.body.enforced,
        },
        { revoked: true, id: keyIdOf(jwk.x), key: null, on: true },
      );
      stored = await tokenRow(token);
      assert.equal(stored.signing_key_id, null);
      assert.equal(Number(stored.signing_enforced), 1, 'enforcement survives a key revocation');

      const off = await t.call('POST', '/api/agent/keys/enforce-toggle', {
        headers,
        body: { token_id: row.id, enforce: false },
      });
      assert.equal(off.body.enforced, false);

      const log = await readEvents(t.deps.db, member.id, { since: 0, limit: 50 });
      assert.deepEqual(
        log.events.map((e) => e.type).filter((type) => type.startsWith('signing_')),
        [
          'signing_key_registered',
          'signing_enforcement_changed',
          'signing_key_revoked',
          'signing_enforcement_changed',
        ],
      );
      const bound = log.events.find((e) => e.type === 'signing_key_registered');
      assert.equal(bound?.target.token_id, row.id);
      assert.equal(bound?.payload.key_id, keyIdOf(jwk.x));
    });

    test('a bearer cannot register, revoke or toggle: session only', async () => {
      const member = await t.member('member');
      const token = await t.token(member, ['membership:read']);
      const row = await tokenRow(token);
      for (const [path, body] of [
        ['/api/agent/keys/register', { token_id: row.id, jwk: ed25519Jwk() }],
        ['/api/agent/keys/revoke', { token_id: row.id }],
        ['/api/agent/keys/enforce-toggle', { token_id: row.id }],
      ] as const) {
        const answer = await t.call('POST', path, { token, body });
        assert.equal(answer.status, 401, path);
        assert.equal(answer.body.error, 'session_required');
      }
      const stored = await tokenRow(token);
      assert.equal(stored.signing_key_id, null);
      assert.equal(Number(stored.signing_enforced), 0);
    });

    test('another member’s token, a revoked token and a bad key are refused', async () => {
      const owner = await t.member('member');
      const other = await t.member('member');
      const token = await t.token(owner, ['membership:read']);
      const row = await tokenRow(token);
      const headers = await sessionOf(other);
      const foreign = await t.call('POST', '/api/agent/keys/register', {
        headers,
        body: { token_id: row.id, jwk: ed25519Jwk() },
      });
      assert.equal(foreign.status, 404);
      assert.equal(foreign.body.error, 'token_not_found');
      const own = await sessionOf(owner);
      const badX = await t.call('POST', '/api/agent/keys/register', {
        headers: own,
        body: { token_id: row.id, jwk: { kty: 'OKP', crv: 'Ed25519', x: 'not-a-key' } },
      });
      assert.equal(badX.status, 400);
      assert.equal(badX.body.error, 'invalid_key');
      const otherCurve = await t.call('POST', '/api/agent/keys/register', {
        headers: own,
        body: { token_id: row.id, jwk: { kty: 'OKP', crv: 'X25519', x: ed25519Jwk().x } },
      });
      assert.equal(otherCurve.status, 400);
      assert.equal((await tokenRow(token)).signing_key_id, null);
      await t.call('POST', '/api/agent/token/revoke', { token });
      const afterRevoke = await t.call('POST', '/api/agent/keys/register', {
        headers: own,
        body: { token_id: row.id, jwk: ed25519Jwk() },
      });
      assert.equal(afterRevoke.status, 404);
    });
  });
}
