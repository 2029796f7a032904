// First-run work (the demo seed of a new database) done by one process at a time. On PostgreSQL the
// process that gets the session advisory lock, held on a connection of its own, does the work while
// instances started beside it wait, then find it done. Tried again every fraction of a second rather
// than waited for in one statement, so the statement timeout never ends a long wait. SQLite has one
// server process per file: nothing to wait for.
import { sql } from 'kysely';
import type { Database } from './database.ts';

const LOCK_NAME = 'agent-commons first run';
const RETRY_MS = 200;

export async function underFirstRunLock<T>(database: Database, work: () => Promise<T>): Promise<T> {
  if (database.engine !== 'postgres') return work();
  return database.db.connection().execute(async (connection) => {
    const key = sql`hashtextextended(${LOCK_NAME}, 0)`;
    while (true) {
      const got = await sql<{ ok: boolean }>`select pg_try_advisory_lock(${key}) as ok`.execute(connection);
      if (got.rows[0]?.ok) break;
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
    try {
      return await work();
    } finally {
      await sql`select pg_advisory_unlock(${key})`.execute(connection);
    }
  });
}
