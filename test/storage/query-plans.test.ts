// The queue and list reads that grow with their tables are served by an index in the order they
// page: on SQLite no SCAN of the table and no temporary B-tree for the order; on PostgreSQL (with
// sequential scans, sorts and bitmap scans priced out, so an empty table's plan is the one a large
// table gets when an index can serve it) no Seq Scan and no Sort. Each read is the repository's own call, its SQL caught by Kysely's log.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { type CompiledQuery, Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import { backlogs } from '../../src/storage/backlogs.ts';
import { bookings } from '../../src/storage/bookings.ts';
import { directory } from '../../src/storage/directory.ts';
import { eventLog } from '../../src/storage/event-log.ts';
import { eventRequests } from '../../src/storage/event-requests.ts';
import { events } from '../../src/storage/events.ts';
import { feedback } from '../../src/storage/feedback.ts';
import { highlights } from '../../src/storage/highlights.ts';
import { members } from '../../src/storage/members.ts';
import { migrateToLatest } from '../../src/storage/migrations.ts';
import { RETENTION_KINDS, retention } from '../../src/storage/retention.ts';
import { activityDays, TALLY, tallies } from '../../src/storage/rollups.ts';
import type { Db } from '../../src/storage/schema.ts';
import { tierRequests } from '../../src/storage/tier-requests.ts';
import { tokens } from '../../src/storage/tokens.ts';
import { engines, freshDatabase, type TestDatabase, testPool } from '../support/databases.ts';

const AFTER = { at: 1_700_000_000_000, id: 'x' };
/** Each read as the service makes it, first page and a later one. */
const READS: [string, (db: Db) => Promise<unknown>][] = [
  ['highlights queue', (db) => highlights.page(db, 'pending', { limit: 50 }, 'asc')],
  [
    'highlights queue, later page',
    (db) => highlights.page(db, 'pending', { limit: 50, after: AFTER }, 'asc'),
  ],
  ['every highlight, newest first', (db) => highlights.page(db, undefined, { limit: 50 }, 'desc')],
  ['approved highlights (public)', (db) => highlights.pageApproved(db, { limit: 20 })],
  ['approved highlights, later page', (db) => highlights.pageApproved(db, { limit: 20, after: AFTER })],
  ['feedback queue', (db) => feedback.page(db, 'open', { limit: 50, after: AFTER }, 'desc')],
  ['tier requests queue', (db) => tierRequests.page(db, 'pending', { limit: 50, after: AFTER })],
  ['event proposals queue', (db) => eventRequests.page(db, 'pending', { limit: 50, after: AFTER }, 'asc')],
  ['every event proposal', (db) => eventRequests.page(db, undefined, { limit: 50 }, 'desc')],
  ['event log of one type', (db) => eventLog.after(db, 'm1', 10, 51, ['tier_approved'], 1000)],
  ['oldest kept event-log record', (db) => eventLog.oldestId(db, 'm1')],
  // Each batch of the retention sweep picks its rows through the time index (the last statement of
  // a kind of two tables' parts is the one checked; both parts share the shape).
  ...RETENTION_KINDS.map((kind): [string, (db: Db) => Promise<unknown>] => [
    `retention batch: ${kind}`,
    (db) => retention.deleteBatch(db, kind, AFTER.at, 500),
  ]),
  ['calls per day, surface and operation (landing page)', (db) => activityDays.since(db, 20_000)],
  ['members, oldest first (operator list)', (db) => members.page(db, { limit: 50 })],
  ['members, later page', (db) => members.page(db, { limit: 50, after: AFTER })],
  [
    "a member's tokens, later page (agent console)",
    (db) => tokens.page(db, 'm1', { limit: 50, after: AFTER }),
  ],
  ['events under way (upcoming)', (db) => events.startedQuery(db, AFTER.at).execute()],
  ['events starting from now (upcoming)', (db) => events.startingQuery(db, AFTER.at, 20).execute()],
  ['upcoming events counted', (db) => events.countUpcoming(db, AFTER.at)],
  [
    'listed members by name, later page (directory)',
    (db) => directory.listedByName(db, 20, { name: 'M', id: 'x' }),
  ],
  ...(['tier_requests', 'highlights', 'event_requests', 'feedback', 'rsvps', 'bookings'] as const).map(
    (queue): [string, (db: Db) => Promise<unknown>] => [
      `${queue} backlog (landing page)`,
      (db) => backlogs.of(db, queue, AFTER.at),
    ],
  ),
  ["a member's bookings, later page", (db) => bookings.pageOfMember(db, 'm1', { limit: 50, after: AFTER })],
  ['token tallies (landing page)', (db) => tallies.read(db, [TALLY.live, TALLY.lastUsed(20_000)])],
];

for (const engine of engines) {
  describe(`query plans (${engine.name})`, { skip: engine.skip }, () => {
    let target: TestDatabase;
    let db: Kysely<any>;
    let explain: (query: CompiledQuery) => Promise<string[]>;
    /** PostgreSQL's plan with sequential scans priced out only (a GIN index is read by bitmap scans). */
    let explainRanked: (query: CompiledQuery) => Promise<string[]>;
    let caught: CompiledQuery | undefined;
    const log = (event: { level: string; query: CompiledQuery }) => {
      caught = event.query;
    };
    before(async () => {
      target = await freshDatabase(engine.name);
      if (engine.name === 'sqlite') {
        const sqlite = new SQLite(target.url.slice('sqlite:'.length));
        db = new Kysely({ dialect: new SqliteDialect({ database: sqlite }), log });
        explain = async ({ sql, parameters }) =>
          (
            sqlite.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...(parameters as unknown[])) as {
              detail: string;
            }[]
          ).map((row) => row.detail);
      } else {
        const pool = testPool(target.url, 1);
        db = new Kysely({ dialect: new PostgresDialect({ pool }), log });
        explain = async ({ sql, parameters }) => {
          const client = await pool.connect();
          try {
            await client.query(
              'SET enable_seqscan = off; SET enable_sort = off; SET enable_bitmapscan = off',
            );
            const plan = await client.query(`EXPLAIN ${sql}`, parameters as unknown[]);
            return plan.rows.map((row) => String(row['QUERY PLAN']));
          } finally {
            await client.query('RESET enable_seqscan; RESET enable_sort; RESET enable_bitmapscan');
            client.release();
          }
        };
        explainRanked = async ({ sql, parameters }) => {
          const client = await pool.connect();
          try {
            await client.query('SET enable_seqscan = off');
            const plan = await client.query(`EXPLAIN ${sql}`, parameters as unknown[]);
            return plan.rows.map((row) => String(row['QUERY PLAN']));
          } finally {
            await client.query('RESET enable_seqscan');
            client.release();
          }
        };
      }
      await migrateToLatest(db);
    });
    after(async () => {
      await db?.destroy();
      await target?.drop();
    });

    // The search ranks a bounded set: the full-text index finds the matches (a bitmap scan of the
    // GIN index is its only way) and a Limit stops at the candidates before ts_rank sorts them.
    test('directory search ranks only its candidates (PostgreSQL)', {
      skip: engine.name !== 'postgres',
    }, async () => {
      const query = directory.matchingOnPostgres(['ada'], 20, 0, 500).compile(db as unknown as Db);
      const plan = await explainRanked(query);
      const text = plan.join('\n');
      assert.match(text, /member_profiles_fts/, text);
      assert.doesNotMatch(text, /Seq Scan/, text);
      assert.ok(
        plan.filter((line) => /Limit/.test(line)).length >= 2,
        `a Limit under the ranking sort\n${text}`,
      );
    });

    for (const [name, read] of READS)
      test(name, async () => {
        caught = undefined;
        await read(db as unknown as Db);
        // The log callback set it (TypeScript cannot see that through the closure).
        const query = caught as CompiledQuery | undefined;
        assert.ok(query, 'the read ran one query');
        const plan = await explain(query);
        const bad =
          engine.name === 'sqlite'
            ? plan.filter((line) => /^SCAN \w+$|TEMP B-TREE/.test(line))
            : plan.filter((line) => /Seq Scan|(^|\s)Sort\b/.test(line));
        assert.deepEqual(bad, [], `${query.sql}\n${plan.join('\n')}`);
      });
  });
}
