import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { ManualClock, MS } from '../src/clock.ts';
import { DEFAULT_TIERS, TierLadder } from '../src/domain/access/tiers.ts';
import { createSession, revokeSession, verifySession } from '../src/domain/auth/sessions.ts';
import {
  DeniedScopesError,
  listTokens,
  mintToken,
  revokeToken,
  verifyToken,
} from '../src/domain/auth/tokens.ts';
import {
  createMember,
  getMember,
  listMembers,
  MemberError,
  setMemberTier,
} from '../src/domain/members/members.ts';
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  IDEMPOTENCY_WINDOW_MS,
  markIdempotencyApplied,
  releaseIdempotencyKey,
} from '../src/operations/pipeline/idempotency.ts';
import { sha256 } from '../src/secrets.ts';
import { counters } from '../src/storage/counters.ts';
import { type Database, openDatabase } from '../src/storage/database.ts';
import { WriteBatcher } from '../src/storage/engine/write-batcher.ts';
import { migrateToLatest } from '../src/storage/migrations.ts';
import { engines, freshDatabase, type TestDatabase } from './support/databases.ts';

// The repository contract: the same calls give the same results on both engines.
for (const engine of engines) {
  describe(`storage contract (${engine.name})`, { skip: engine.skip }, () => {
    let target: TestDatabase;
    let database: Database;
    const clock = new ManualClock();
    const tiers = new TierLadder(DEFAULT_TIERS);
    let writes: WriteBatcher;
    /** What a write that opens its own transaction needs (the composition root passes the whole Deps). */
    const ports = () => ({ writes, clock, tiers });
    before(async () => {
      target = await freshDatabase(engine.name);
      database = openDatabase(target.url);
      await migrateToLatest(database.db);
      writes = new WriteBatcher(database);
    });
    after(async () => {
      await database?.close();
      await target?.drop();
    });

    test('migrations are idempotent: a second run applies nothing, keeps the schema and the data', async () => {
      const kept = await createMember(database.db, clock, tiers, {
        email: 'kept@example.org',
        name: 'Kept',
        tier: 'member',
      });
      const applied = () =>
        database.db
          .selectFrom('kysely_migration' as never)
          .select(['name' as never, 'timestamp' as never])
          .orderBy('name' as never)
          .execute();
      const schema = async () =>
        (await database.db.introspection.getTables())
          .map((table) => `${table.name}(${table.columns.map((c) => `${c.name}:${c.dataType}`).join(',')})`)
          .sort();
      const [migrationsBefore, schemaBefore] = [await applied(), await schema()];
      // One per migration module in src/storage/migrations.
      const modules = readdirSync('src/storage/migrations').filter((name) => /^\d{4}-/.test(name));
      assert.equal(migrationsBefore.length, modules.length, 'every migration is recorded once');
      await migrateToLatest(database.db);
      assert.deepEqual(await applied(), migrationsBefore, 'no migration ran again');
      assert.deepEqual(await schema(), schemaBefore, 'the schema did not change');
      assert.deepEqual(await getMember(database.db, kept.id), kept, 'the data is intact');
    });

    test('members: create, unique email, tiers, order; times come back as numbers', async () => {
      const first = await createMember(database.db, clock, tiers, {
        email: 'Ada@Example.org',
        name: 'Ada',
        tier: 'core',
      });
      assert.equal(first.email, 'ada@example.org');
      await assert.rejects(
        createMember(database.db, clock, tiers, { email: 'ada@example.org', name: 'Ada 2' }),
        MemberError,
      );
      await assert.rejects(
        createMember(database.db, clock, tiers, { email: 'x@example.org', name: 'X', tier: 'emperor' }),
        MemberError,
      );
      clock.advance(1);
      const second = await createMember(database.db, clock, tiers, { email: 'bo@example.org', name: 'Bo' });
      assert.equal(second.tier, 'public', 'new members start on the lowest tier');
      const stored = await getMember(database.db, first.id);
      assert.equal(typeof stored?.created_at, 'number');
      assert.equal(stored?.created_at, first.created_at);
      const listed = (await listMembers(database.db)).map((m) => m.id);
      assert.ok(listed.indexOf(first.id) < listed.indexOf(second.id));
      const promoted = await setMemberTier(database.db, clock, tiers, second.id, 'resident');
      assert.equal(promoted.tier, 'resident');
      await assert.rejects(setMemberTier(database.db, clock, tiers, 'mem_missing', 'core'), MemberError);
    });

    test('tokens: minted hashed, verified by hash, refused above the tier, revoked once', async () => {
      const member = await createMember(database.db, clock, tiers, {
        email: 'tok@example.org',
        name: 'Tok',
        tier: 'member',
      });
      await assert.rejects(
        mintToken(ports(), member, {
          scopes: ['events:rsvp', 'resources:book'],
          sandbox: false,
          name: 't',
          source: 'cli',
        }),
        (error: unknown) => error instanceof DeniedScopesError && error.denied.join() === 'resources:book',
      );
      const minted = await mintToken(ports(), member, {
        scopes: ['events:rsvp', 'read:public', 'events:rsvp'],
        sandbox: true,
        name: 't',
        source: 'cli',
      });
      assert.equal(minted.row.hash, sha256(minted.plaintext));
      assert.deepEqual(JSON.parse(minted.row.scopes), ['events:rsvp', 'read:public']);
      const found = await verifyToken(database.db, minted.plaintext);
      assert.ok(found.ok);
      assert.equal(found.token.sandbox, true);
      assert.equal(found.member.tier, 'member');
      // A token differing in its last character (base64url's last of 43 carries 4 bits: A, E, I, …).
      const lastChar = minted.plaintext.at(-1) === 'A' ? 'E' : 'A';
      assert.deepEqual(await verifyToken(database.db, `${minted.plaintext.slice(0, -1)}${lastChar}`), {
        ok: false,
        reason: 'unknown',
      });
      assert.deepEqual(await verifyToken(database.db, 'agt_short'), { ok: false, reason: 'malformed' });
      assert.deepEqual(await revokeToken(ports(), minted.row.id), {
        prefix: minted.row.prefix,
        alreadyRevoked: false,
      });
      assert.deepEqual(await revokeToken(ports(), minted.row.id), {
        prefix: minted.row.prefix,
        alreadyRevoked: true,
      });
      const after = await verifyToken(database.db, minted.plaintext);
      assert.equal(after.ok ? 'ok' : after.reason, 'revoked');
      const listed = await listTokens(database.db, member.id);
      assert.equal(listed.length, 1);
      assert.equal(typeof listed[0].revoked_at, 'number');
    });

    test('sessions: stored hashed, expire, revoke', async () => {
      const member = await createMember(database.db, clock, tiers, { email: 'ses@example.org', name: 'Ses' });
      const id = await createSession(database.db, clock, member.id);
      const row = await database.db
        .selectFrom('sessions')
        .selectAll()
        .where('id_hash', '=', sha256(id))
        .executeTakeFirst();
      assert.ok(row);
      assert.equal((await verifySession(database.db, id, clock.now()))?.member.id, member.id);
      assert.equal(await verifySession(database.db, id, clock.now() + 15 * MS.day), undefined, 'expired');
      await revokeSession(database.db, clock, id);
      assert.equal(await verifySession(database.db, id, clock.now()), undefined, 'revoked');
    });

    test('counters: take is atomic under concurrency and never passes the limit', async () => {
      const key = `contract-take-${engine.name}`;
      const results = await Promise.all(
        Array.from({ length: 50 }, () => counters.take(database.db, key, 20, clock.now() + MS.hour)),
      );
      const granted = results.filter((r) => r !== undefined) as number[];
      assert.equal(granted.length, 20);
      assert.deepEqual(
        [...granted].sort((a, b) => a - b),
        Array.from({ length: 20 }, (_, i) => i + 1),
      );
      assert.equal(await counters.peek(database.db, key), 20);
      assert.equal(await counters.sweep(database.db, clock.now() + 2 * MS.hour), 1);
      assert.equal(await counters.peek(database.db, key), 0);
    });

    test('idempotency: one owner, replay after completion, 422 on another body, release on failure', async () => {
      const scope = { principal: 'member:m1', method: 'POST', path: '/x', key: 'k1' };
      const now = clock.now();
      const claims = await Promise.allSettled(
        Array.from({ length: 5 }, () => claimIdempotencyKey(database.db, scope, { a: 1 }, now)),
      );
      const owners = claims.filter((c) => c.status === 'fulfilled' && c.value.kind === 'owner');
      assert.equal(owners.length, 1, 'exactly one concurrent claim owns the key');
      const owner = (owners[0] as PromiseFulfilledResult<{ kind: 'owner'; keyHash: string }>).value;
      for (const claim of claims.filter((c) => c.status === 'rejected')) {
        assert.equal(((claim as PromiseRejectedResult).reason as { status: number }).status, 409);
      }
      await completeIdempotencyKey(database.db, owner.keyHash, {
        status: 202,
        headers: { location: '/l', other: 'x' },
        body: { ok: true },
      });
      const replay = await claimIdempotencyKey(database.db, scope, { a: 1 }, now + 1000);
      assert.deepEqual(replay, {
        kind: 'replay',
        response: { status: 202, headers: { location: '/l' }, body: { ok: true } },
      });
      await assert.rejects(claimIdempotencyKey(database.db, scope, { a: 2 }, now + 1000), { status: 422 });
      const other = { ...scope, key: 'k2' };
      const claim = await claimIdempotencyKey(database.db, other, { a: 1 }, now);
      assert.equal(claim.kind, 'owner');
      if (claim.kind === 'owner') await releaseIdempotencyKey(database.db, claim.keyHash, false);
      assert.equal(
        (await claimIdempotencyKey(database.db, other, { a: 3 }, now)).kind,
        'owner',
        'released keys start afresh',
      );

      // Applied (the operation's transaction committed), its answer never recorded: as a crash
      // between the commit and the record leaves it.
      const crashed = { ...scope, key: 'k3' };
      const applied = await claimIdempotencyKey(database.db, crashed, { a: 1 }, now);
      assert.equal(applied.kind, 'owner');
      const keyHash = (applied as { keyHash: string }).keyHash;
      await database.db.transaction().execute((trx) => markIdempotencyApplied(trx, keyHash));
      const stateOf = async () =>
        (
          await database.db
            .selectFrom('idempotency')
            .select('state')
            .where('key_hash', '=', keyHash)
            .execute()
        ).map((row) => row.state);
      assert.deepEqual(await stateOf(), ['applied']);
      await releaseIdempotencyKey(database.db, keyHash, false);
      assert.deepEqual(await stateOf(), ['applied'], 'a failure after the commit keeps the claim applied');
      await assert.rejects(claimIdempotencyKey(database.db, crashed, { a: 1 }, now + 1000), {
        status: 409,
        code: 'idempotency_in_flight',
      });
      await assert.rejects(claimIdempotencyKey(database.db, crashed, { a: 1 }, now + 61_000), {
        status: 409,
        code: 'idempotency_answer_lost',
      });
      await assert.rejects(claimIdempotencyKey(database.db, crashed, { a: 9 }, now + 61_000), {
        status: 422,
      });
      assert.deepEqual(await stateOf(), ['applied'], 'never claimed again within the window');
      assert.equal(
        (await claimIdempotencyKey(database.db, crashed, { a: 1 }, now + IDEMPOTENCY_WINDOW_MS + 1)).kind,
        'owner',
        'after the window the key starts afresh',
      );
      await releaseIdempotencyKey(database.db, keyHash, false);
      const refused = await claimIdempotencyKey(
        database.db,
        crashed,
        { a: 1 },
        now + IDEMPOTENCY_WINDOW_MS + 2,
      );
      assert.equal(refused.kind, 'owner');
      await database.db.transaction().execute((trx) => markIdempotencyApplied(trx, keyHash));
      await releaseIdempotencyKey(database.db, keyHash, true);
      assert.deepEqual(await stateOf(), [], 'a refusal releases even an applied claim');
    });
  });
}
