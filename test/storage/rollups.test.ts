// The dashboard's rollups: after every write that changes them (a call recorded or corrected, a
// token minted, used or revoked) and after the migration that fills them from existing rows, they
// hold what a count of the tables gives, on both engines.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { Kysely } from 'kysely';
import { Migrator } from 'kysely/migration';
import { ManualClock } from '../../src/clock.ts';
import { DEFAULT_TIERS, TierLadder } from '../../src/domain/access/tiers.ts';
import { correctActivity, insertActivity, recordActivity } from '../../src/domain/activity/activity.ts';
import { mintToken, revokeToken, touchToken, verifyToken } from '../../src/domain/auth/tokens.ts';
import { activityByDay, busiestOperations, tokenCounts } from '../../src/domain/operator/overview.ts';
import { activity, activityIdPrefix } from '../../src/storage/activity.ts';
import { type Database, openDatabase } from '../../src/storage/database.ts';
import { WriteBatcher } from '../../src/storage/engine/write-batcher.ts';
import { MIGRATIONS, migrateToLatest } from '../../src/storage/migrations.ts';
import type { Db } from '../../src/storage/schema.ts';
import { tokenTally } from '../../src/storage/token-counts.ts';
import { transact } from '../../src/storage/transactions.ts';
import { engines, freshDatabase, type TestDatabase } from '../support/databases.ts';

const DAY = 86_400_000;
const DAYS = 14;

/** What the landing page shows, from the rollups, beside the same figures counted from the tables. */
async function both(deps: { db: Db; clock: ManualClock }) {
  const now = deps.clock.now();
  const since = Math.floor(now / DAY) * DAY - (DAYS - 1) * DAY;
  const tally = await tokenTally.of(deps.db, Math.floor(now / DAY) * DAY - 6 * DAY - 1);
  const counted = (await activity.byDay(deps.db, since)).map((row) => ({
    ...row,
    day: new Date(row.day * DAY).toISOString().slice(0, 10),
  }));
  const sort = <T extends { day: string; surface: string }>(rows: T[]) =>
    [...rows].sort((a, b) => `${a.day}${a.surface}`.localeCompare(`${b.day}${b.surface}`));
  return {
    rolled: {
      tokens: await tokenCounts(deps),
      days: sort(await activityByDay(deps, DAYS)),
      busiest: await busiestOperations(deps, DAYS, 5),
    },
    counted: {
      tokens: {
        live: tally.live,
        sandbox: tally.sandbox,
        revoked: tally.revoked,
        activeThisWeek: tally.active,
        members: tally.members,
      },
      days: sort(counted),
      busiest: await activity.busiest(deps.db, since, 5),
    },
  };
}

for (const engine of engines) {
  describe(`dashboard rollups (${engine.name})`, { skip: engine.skip }, () => {
    const opened: { target: TestDatabase; database: Database }[] = [];
    const open = async (upTo?: string) => {
      const target = await freshDatabase(engine.name);
      const database = openDatabase(target.url);
      opened.push({ target, database });
      if (upTo) {
        const migrations = Object.fromEntries(MIGRATIONS);
        const migrator = new Migrator({
          db: database.db as unknown as Kysely<any>,
          provider: { getMigrations: async () => migrations },
        });
        const { error } = await migrator.migrateTo(upTo);
        if (error) throw error;
      } else await migrateToLatest(database.db);
      const clock = new ManualClock(Date.UTC(2026, 6, 16, 12));
      return {
        db: database.db,
        clock,
        writes: new WriteBatcher(database),
        tiers: new TierLadder(DEFAULT_TIERS),
      };
    };
    after(async () => {
      for (const { target, database } of opened) {
        await database.close();
        await target.drop();
      }
    });
    let members = 0;
    const member = async (db: Db, at: number) => {
      const id = `mem_${++members}`;
      await db
        .insertInto('members')
        .values({
          id,
          email: `m${members}@example.org`,
          name: `M${members}`,
          handle: `m-${members}`,
          tier: 'member',
          created_at: at,
          updated_at: at,
        })
        .execute();
      return { id, tier: 'member' };
    };
    const call = (memberId: string, at: number, operation: string, surface: string, status: number) => ({
      memberId,
      operation,
      surface,
      tokenPrefix: 'agt_x',
      status,
      outcome: status < 400 ? 'ok' : 'refused',
      at,
    });

    test('tokens minted, used on several days and revoked: the tallies move as a recount does', async () => {
      const deps = await open();
      const ada = await member(deps.db, deps.clock.now());
      const bo = await member(deps.db, deps.clock.now());
      const mint = (owner: { id: string; tier: string }, sandbox = false) =>
        mintToken(deps, owner, { scopes: [], sandbox, name: 't', source: 'console' });
      const use = async (plaintext: string) => {
        const lookup = await verifyToken(deps.db, plaintext);
        assert.ok(lookup.ok);
        await touchToken(deps, lookup.token, deps.clock.now());
      };
      const first = await mint(ada);
      const second = await mint(ada, true);
      const third = await mint(bo);
      let { rolled, counted } = await both(deps);
      assert.deepEqual(rolled.tokens, { live: 2, sandbox: 1, revoked: 0, activeThisWeek: 0, members: 2 });
      assert.deepEqual(rolled.tokens, counted.tokens);

      await use(first.plaintext);
      await use(second.plaintext);
      deps.clock.advance(2 * 60_000);
      await use(first.plaintext); // the same day: the tally stays
      deps.clock.advance(DAY);
      await use(first.plaintext); // a new day: moved, still one token
      await use(third.plaintext);
      ({ rolled, counted } = await both(deps));
      assert.equal(rolled.tokens.activeThisWeek, 3);
      assert.deepEqual(rolled.tokens, counted.tokens);

      await revokeToken(deps, first.row.id);
      await revokeToken(deps, first.row.id); // twice changes nothing
      ({ rolled, counted } = await both(deps));
      assert.deepEqual(rolled.tokens, { live: 1, sandbox: 1, revoked: 1, activeThisWeek: 2, members: 2 });
      assert.deepEqual(rolled.tokens, counted.tokens);

      await revokeToken(deps, second.row.id);
      ({ rolled, counted } = await both(deps));
      assert.equal(rolled.tokens.members, 1, 'Ada holds no live token now');
      assert.deepEqual(rolled.tokens, counted.tokens);

      // A week on, the uses have aged out of the window.
      deps.clock.advance(7 * DAY);
      ({ rolled, counted } = await both(deps));
      assert.equal(rolled.tokens.activeThisWeek, 0);
      assert.deepEqual(rolled.tokens, counted.tokens);
    });

    test('calls recorded, corrected and rolled back: the daily counts match the activity log', async () => {
      const deps = await open();
      const cy = await member(deps.db, deps.clock.now());
      const today = deps.clock.now();
      let n = 0;
      const id = (at: number) => `${activityIdPrefix(at)}${String(++n).padStart(10, '0')}`;
      await recordActivity(deps, call(cy.id, today - 3 * DAY, 'events.list', 'rest', 200));
      await recordActivity(deps, call(cy.id, today - 3 * DAY, 'events.list', 'mcp', 429));
      await recordActivity(deps, call(cy.id, today - 20 * DAY, 'events.list', 'rest', 200)); // outside
      const written = call(cy.id, today, 'highlights.submit', 'a2a', 201);
      const writtenId = id(today);
      await transact(deps, (trx) => insertActivity(trx, writtenId, written));
      await transact(deps, (trx) => insertActivity(trx, id(today), call(cy.id, today, 'rsvp', 'rest', 200)));
      await assert.rejects(
        transact(deps, async (trx) => {
          await insertActivity(trx, id(today), call(cy.id, today, 'rsvp', 'rest', 200));
          throw new Error('undone');
        }),
        /undone/,
      );
      let { rolled, counted } = await both(deps);
      assert.deepEqual(rolled.days, counted.days);
      assert.deepEqual(rolled.busiest, counted.busiest);
      assert.deepEqual(rolled.busiest[0], { operation: 'events.list', calls: 2, refusals: 1 });

      // Answered otherwise than the transaction assumed: into the refusals, and back out.
      await correctActivity(deps, writtenId, { status: 500, outcome: 'internal' }, written);
      ({ rolled, counted } = await both(deps));
      assert.deepEqual(rolled.days, counted.days);
      assert.deepEqual(rolled.busiest, counted.busiest);
      await correctActivity(deps, writtenId, { status: 200, outcome: 'ok' }, { ...written, status: 500 });
      await correctActivity(deps, writtenId, { status: 202, outcome: 'ok' }, { ...written, status: 200 });
      ({ rolled, counted } = await both(deps));
      assert.deepEqual(rolled.days, counted.days);
      assert.deepEqual(rolled.busiest, counted.busiest);
    });

    test('the migration fills the rollups from the rows already there', async () => {
      const deps = await open('0019_activity_targets');
      const now = deps.clock.now();
      const dee = await member(deps.db, now);
      const eve = await member(deps.db, now);
      let n = 0;
      const token = (memberId: string, sandbox: number, used: number | null, revoked: number | null) =>
        deps.db
          .insertInto('tokens')
          .values({
            id: `tok_${++n}`,
            member_id: memberId,
            hash: `hash_${n}`,
            prefix: `p${n}`,
            name: 't',
            scopes: '[]',
            sandbox,
            source: 'test',
            created_at: 1,
            last_used_at: used,
            revoked_at: revoked,
          })
          .execute();
      await token(dee.id, 0, now - DAY, null);
      await token(dee.id, 0, now - 10 * DAY, null);
      await token(eve.id, 1, now, null);
      await token(eve.id, 0, now, now);
      await token(eve.id, 0, null, 5);
      for (const [i, [days, surface, status]] of (
        [
          [0, 'rest', 200],
          [0, 'rest', 404],
          [2, 'mcp', 200],
          [13, 'a2a', 500],
          [15, 'rest', 200],
        ] as const
      ).entries())
        await activity.insert(
          deps.db,
          `${activityIdPrefix(now - days * DAY)}${i}`,
          call(dee.id, now - days * DAY, `op${i % 2}`, surface, status),
        );
      await migrateToLatest(deps.db);
      const { rolled, counted } = await both(deps);
      assert.deepEqual(rolled.tokens, { live: 2, sandbox: 1, revoked: 2, activeThisWeek: 2, members: 2 });
      assert.deepEqual(rolled.tokens, counted.tokens);
      assert.deepEqual(rolled.days, counted.days);
      assert.deepEqual(rolled.busiest, counted.busiest);
      // What the backfill counted goes on being counted by the writes.
      await recordActivity(deps, call(dee.id, now, 'op0', 'rest', 200));
      await mintToken(deps, dee, { scopes: [], sandbox: false, name: 'n', source: 'cli' });
      const later = await both(deps);
      assert.deepEqual(later.rolled, later.counted);
    });
  });
}
