// What the embedded engine alone costs a highlight write: the statements a write unit runs (the
// story, the daily quota, the activity row, the unit's savepoint), prepared once and run straight on
// better-sqlite3 against the migrated schema, 25 units a transaction as the write batcher groups
// them under load. No HTTP, no pipeline, no Kysely: the floor under the durable
// SQLite write's server CPU.
// Usage: node bench/sqlite-floor.ts   (BENCH_UNITS, default 50 000 per row; two rounds)
import SQLite from 'better-sqlite3';
import { benchEnvironment, cli, mintBenchToken } from './support.ts';

const { env } = benchEnvironment('agent-commons-sqlite-floor-');
cli(['migrate'], env);
mintBenchToken(env, 'floor', 'events:submit_recap', false);
const db = new SQLite(env.DATABASE_URL.slice('sqlite:'.length));
// As src/storage/database.ts opens it.
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.pragma('foreign_keys = ON');
db.pragma('wal_autocheckpoint = 10000');
const { id: memberId } = db.prepare('select id from members limit 1').get() as { id: string };
// The statements' text as the service sends them (Kysely's compilation of the prepared queries).
const insertStory = db.prepare(
  'insert into "highlights" ("id", "member_id", "token_id", "story", "status", "submitted_at", "updated_at", "expires_at", "decided_at", "decided_by") values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) on conflict ("id") do nothing returning "id"',
);
const takeQuota = db.prepare(
  'insert into "counters" ("key", "count", "expires_at") values (?, ?, ?) on conflict ("key") do update set "count" = counters.count + 1 where "counters"."count" < ? returning "count"',
);
const insertActivity = db.prepare(
  'insert into "activity" ("id", "member_id", "at", "operation", "surface", "token_prefix", "status", "outcome") values (?, ?, ?, ?, ?, ?, ?, ?)',
);
const savepoint = db.prepare('savepoint write_unit');
const release = db.prepare('release write_unit');
const begin = db.prepare('begin immediate');
const commit = db.prepare('commit');
const story = JSON.stringify({
  id: 'x',
  event_title: 'Bench night',
  dek: 'A short recap of the night.',
  date: '2026-07-16',
});
const units = Number(process.env.BENCH_UNITS ?? 50_000);
let sequence = 0;

const parts: Record<string, () => void> = {
  'begin and commit only': () => {},
  'savepoint and release': () => {
    savepoint.run();
    release.run();
  },
  'story insert': () => {
    const now = Date.now();
    insertStory.all(
      `floor-${++sequence}`,
      memberId,
      'token',
      story,
      'pending',
      now,
      now,
      now + 1e6,
      null,
      null,
    );
  },
  'quota upsert': () => {
    takeQuota.all('highlights:token:day', 1, Date.now() + 1e6, 1e9);
  },
  'activity insert': () => {
    const now = Date.now();
    const id = `${now.toString(36).padStart(10, '0')}${(++sequence).toString(16).padStart(10, '0')}`;
    insertActivity.run(id, memberId, now, 'submitHighlight', 'rest', 'agt_floor', 202, 'ok');
  },
};
parts['a whole unit'] = () => {
  savepoint.run();
  parts['story insert']();
  parts['quota upsert']();
  parts['activity insert']();
  release.run();
};

for (let round = 1; round <= 2; round++)
  for (const [name, unit] of Object.entries(parts)) {
    const before = process.cpuUsage();
    for (let batch = 0; batch < units / 25; batch++) {
      begin.run();
      for (let i = 0; i < 25; i++) unit();
      commit.run();
    }
    const spent = process.cpuUsage(before);
    const micros = (spent.user + spent.system) / units;
    console.log(
      `${round}: ${name.padEnd(22)} ${micros.toFixed(1).padStart(5)} µs of CPU a unit (system ${(spent.system / units).toFixed(1)})`,
    );
  }
db.close();
