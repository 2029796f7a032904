// Builds a scale fixture database (test/support/scale-fixture.ts): a migrated database of the
// given engine filled to S or L, and prints its URL and how long each table took.
//   node scripts/scale-fixture.ts sqlite L [path/to/file.db]
//   node scripts/scale-fixture.ts postgres S postgres://postgres@127.0.0.1:5432/empty_database
// SCALE_L_ROWS scales L (default 10^6 rows).

import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { migrateToLatest } from '../src/storage/migrations.ts';
import { fillScale, SIZE_S, sizeL } from '../test/support/scale-fixture.ts';

const [engine = 'sqlite', sizeName = 'S', target] = process.argv.slice(2);
if (engine !== 'sqlite' && engine !== 'postgres') throw new Error('engine is sqlite or postgres');
const size = sizeName === 'L' ? sizeL() : SIZE_S;
const url = engine === 'sqlite' ? `sqlite:${target ?? `scale-${size.name}.db`}` : target;
if (!url) throw new Error('give the URL of an empty PostgreSQL database');
const db = new Kysely<any>({
  dialect:
    engine === 'sqlite'
      ? new SqliteDialect({ database: new SQLite(url.slice('sqlite:'.length)) })
      : new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }),
});
await migrateToLatest(db);
await db.destroy();
const started = performance.now();
const took = await fillScale(engine, url, size, Date.now());
console.log(JSON.stringify({ url, size, took, total_ms: Math.round(performance.now() - started) }));
