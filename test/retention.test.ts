// The retention sweep against a real database of each engine: it deletes exactly the rows its
// settings put past their window (a row at the cut-off stays, one a millisecond older goes), never
// a live one, while other writes go on; two sweepers never both run; a dry run only counts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock, MS } from '../src/clock.ts';
import { loadConfig } from '../src/config.ts';
import { sweepRetention } from '../src/domain/retention/sweep.ts';
import { type Database, openDatabase } from '../src/storage/database.ts';
import { migrateToLatest } from '../src/storage/migrations.ts';
import { RETENTION_KINDS } from '../src/storage/retention.ts';
import { startScheduler } from '../src/workers/scheduler.ts';
import { startTestApp } from './support/app.ts';
import { engines, freshDatabase, type TestDatabase } from './support/databases.ts';
import { countRows, LIVE_KINDS, writeRow } from './support/retention-rows.ts';
import { waitUntil } from './support/wait.ts';

const DAYS = 10;
const retentionOf = (days: number) => {
  const loaded = loadConfig({}).retention;
  return Object.fromEntries(
    Object.keys(loaded).map((k) => [k, k === 'sweepMinutes' ? 0 : days]),
  ) as typeof loaded;
};

for (const engine of engines) {
  describe(`retention sweep (${engine.name})`, { skip: engine.skip, concurrency: 1 }, () => {
    let target: TestDatabase;
    let database: Database;
    let other: Database;
    const clock = new ManualClock();
    const deps = () => ({ db: database.db, clock, config: { retention: retentionOf(DAYS) } });
    let memberId: string;
    let n = 0;

    before(async () => {
      target = await freshDatabase(engine.name);
      database = openDatabase(target.url);
      await migrateToLatest(database.db);
      // A second instance on the same database.
      other = openDatabase(target.url);
      memberId = await newMember();
      await database.db
        .insertInto('resources')
        .values({ id: 'room-1', kind: 'room', name: 'Room 1', capacity: 4, open_hours: '{}', bookable: 1 })
        .execute();
    });
    after(async () => {
      await other?.close();
      await database?.close();
      await target?.drop();
    });

    async function newMember(): Promise<string> {
      const id = `mem_${++n}`;
      const now = clock.now();
      await database.db
        .insertInto('members')
        .values({
          id,
          email: `${id}@example.org`,
          name: id,
          handle: id,
          tier: 'member',
          created_at: now,
          updated_at: now,
        })
        .execute();
      return id;
    }
    async function clear() {
      for (const table of [
        'activity',
        'event_log',
        'event_log_heads',
        'device_grants',
        'sign_in_links',
        'sessions',
        'idempotency',
        'feedback',
        'highlights',
        'bookings',
        'tier_requests',
        'tokens',
        'operator_audit',
      ] as const)
        await database.db.deleteFrom(table).execute();
    }
    const counts = async () =>
      Object.fromEntries(
        await Promise.all(RETENTION_KINDS.map(async (k) => [k, await countRows(database.db, k)])),
      );

    test('removes the rows past the window, keeps those at it and every live one', async () => {
      await clear();
      const cutoff = clock.now() - DAYS * MS.day;
      for (const kind of RETENTION_KINDS) {
        await writeRow(database.db, kind, memberId, cutoff - 1); // just outside: goes
        await writeRow(database.db, kind, memberId, cutoff); // just inside: stays
      }
      // Live rows, however old: stay.
      for (const kind of LIVE_KINDS) await writeRow(database.db, kind, memberId, cutoff - 400 * MS.day, true);
      // A live session (its expiry ahead) and a highlight whose moderation expired long ago.
      await writeRow(database.db, 'sessions', memberId, clock.now() + MS.day);
      await database.db
        .insertInto('highlights')
        .values({
          id: 'expired-pending',
          member_id: memberId,
          token_id: 't',
          story: 's',
          status: 'pending',
          submitted_at: 0,
          updated_at: 0,
          expires_at: cutoff - 1,
          decided_at: null,
          decided_by: null,
        })
        .execute();

      const dry = await sweepRetention(deps(), { dryRun: true });
      const expected = Object.fromEntries(RETENTION_KINDS.map((k) => [k, k === 'highlights' ? 2 : 1]));
      assert.deepEqual(
        Object.fromEntries(dry.kinds.map((k) => [k.kind, k.rows])),
        expected,
        'dry run counts',
      );
      for (const k of dry.kinds) assert.equal(k.cutoff, cutoff, k.kind);
      const beforeSweep = await counts();

      const swept = await sweepRetention(deps(), { batch: 1, pauseMs: 0 });
      assert.equal(swept.ran, true);
      assert.deepEqual(Object.fromEntries(swept.kinds.map((k) => [k.kind, k.rows])), expected, 'swept');
      const afterSweep = await counts();
      for (const kind of RETENTION_KINDS)
        assert.equal(afterSweep[kind], beforeSweep[kind] - expected[kind], `${kind}: only the due rows went`);
      // What is left: the row at the cut-off, and the live ones.
      assert.deepEqual(afterSweep, {
        ...Object.fromEntries(RETENTION_KINDS.map((k) => [k, LIVE_KINDS.includes(k) ? 2 : 1])),
        sessions: 2,
      });
      const heads = await database.db.selectFrom('event_log_heads').select('last_id').execute();
      assert.deepEqual(
        heads.map((h) => Number(h.last_id)),
        [2],
        'the reader keeps its last id',
      );
      // A kind set to keep is not looked at.
      await writeRow(database.db, 'activity', memberId, 0);
      const kept = await sweepRetention({ ...deps(), config: { retention: retentionOf(0) } });
      assert.ok(kept.kinds.every((k) => k.rows === 0 && k.cutoff === null && k.days === 0));
      assert.equal(await countRows(database.db, 'activity'), 2);
    });

    test('the dry run removes nothing', async () => {
      await clear();
      for (let i = 0; i < 5; i++) await writeRow(database.db, 'activity', memberId, i);
      const dry = await sweepRetention(deps(), { dryRun: true });
      assert.equal(dry.kinds.find((k) => k.kind === 'activity')?.rows, 5);
      assert.equal(await countRows(database.db, 'activity'), 5);
    });

    test('writes go on while it sweeps, and what they write stays', async () => {
      await clear();
      const old = clock.now() - 20 * MS.day;
      for (let i = 0; i < 60; i++) {
        await writeRow(database.db, 'activity', memberId, old + i);
        await writeRow(database.db, 'eventLog', memberId, old + i);
      }
      let written = 0;
      let writing = true;
      const writer = (async () => {
        while (writing) {
          await writeRow(other.db, 'activity', memberId, clock.now());
          await writeRow(other.db, 'eventLog', memberId, clock.now());
          written++;
          await new Promise((resolve) => setTimeout(resolve, 1));
        }
      })();
      let batches = 0;
      const report = await sweepRetention(deps(), {
        batch: 7,
        pauseMs: 2,
        afterBatch: async () => {
          batches++;
          // Another instance writes between two batches.
          await writeRow(other.db, 'activity', memberId, clock.now());
          written++;
        },
      });
      writing = false;
      await writer;
      assert.ok(batches > 10, `${batches} batches`);
      assert.equal(report.kinds.find((k) => k.kind === 'activity')?.rows, 60);
      assert.equal(report.kinds.find((k) => k.kind === 'eventLog')?.rows, 60);
      assert.ok(written > 0);
      const left = await database.db.selectFrom('activity').select('at').execute();
      assert.ok(left.every((row) => Number(row.at) >= clock.now() - DAYS * MS.day));
      const logIds = (await database.db.selectFrom('event_log').select('id').orderBy('id').execute()).map(
        (r) => Number(r.id),
      );
      assert.equal(logIds[0], 61, 'the log keeps its newer records, ids unchanged');
    });

    test('of two sweepers at once, on two instances, only one runs', async () => {
      await clear();
      for (let i = 0; i < 30; i++) await writeRow(database.db, 'activity', memberId, i);
      const slow = { batch: 5, pauseMs: 5 };
      const [a, b] = await Promise.all([
        sweepRetention(deps(), slow),
        sweepRetention({ ...deps(), db: other.db }, slow),
      ]);
      assert.deepEqual([a.ran, b.ran].sort(), [false, true]);
      const ran = a.ran ? a : b;
      assert.equal(ran.kinds.find((k) => k.kind === 'activity')?.rows, 30);
      assert.deepEqual((a.ran ? b : a).kinds, [], 'the other did nothing');
      // The lease was given back: the next sweep runs at once.
      assert.equal((await sweepRetention({ ...deps(), db: other.db })).ran, true);
    });

    test('a sweeper that died holding the lease holds it only until it runs out', async () => {
      const { retention } = await import('../src/storage/retention.ts');
      assert.equal(await retention.takeLease(database.db, clock.now(), clock.now() + MS.minute), true);
      assert.equal((await sweepRetention(deps())).ran, false);
      clock.advance(MS.minute);
      assert.equal((await sweepRetention(deps())).ran, true);
    });
  });
}

for (const engine of engines) {
  describe(`the scheduler sweeps on its own (${engine.name})`, { skip: engine.skip }, () => {
    test('its first pass removes what is past the window and logs the counts', async () => {
      const t = await startTestApp({ engine: engine.name });
      try {
        const member = await t.member('member');
        await writeRow(t.deps.db, 'activity', member.id, t.clock.now() - 181 * MS.day);
        await writeRow(t.deps.db, 'activity', member.id, t.clock.now() - 179 * MS.day);
        const lines: { details: Record<string, unknown>; message: string }[] = [];
        const log = {
          info: (details: Record<string, unknown>, message: string) => lines.push({ details, message }),
          warn: (details: Record<string, unknown>, message: string) => lines.push({ details, message }),
        };
        const stop = startScheduler(t.deps, log, { workers: false });
        try {
          await waitUntil(
            () => lines.some((l) => l.message === 'retention sweep removed expired records'),
            'the sweep’s first pass',
          );
        } finally {
          await stop();
        }
        const swept = lines.find((l) => l.message === 'retention sweep removed expired records');
        assert.deepEqual(swept?.details, { removed: { activity: 1 } });
        assert.equal(await countRows(t.deps.db, 'activity'), 1);
      } finally {
        await t.close();
      }
    });
  });
}
