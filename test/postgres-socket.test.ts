// PostgreSQL on the same host, reached through its Unix socket (docs/deployment.md): DATABASE_URL
// names the socket's directory as the host. The service, its change listener and the CLI all connect
// that way, and the server confirms the connection is not a TCP one.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { type Database, openDatabase } from '../src/storage/database.ts';
import { migrateToLatest } from '../src/storage/migrations.ts';
import { engines, freshDatabase, type TestDatabase } from './support/databases.ts';
import { runCli } from './support/processes.ts';

const postgres = engines.find((engine) => engine.name === 'postgres')!;
const SOCKET_DIR = '/var/run/postgresql';
const local = postgres.skip === false && existsSync(`${SOCKET_DIR}/.s.PGSQL.5432`);

/** The same database as `url`, through the local socket (the user and database kept). */
function throughSocket(url: string): string {
  const tcp = new URL(url);
  return `postgres://${tcp.username}@${encodeURIComponent(SOCKET_DIR)}${tcp.pathname}`;
}

describe('PostgreSQL through its Unix socket', {
  // CI runs PostgreSQL on the machine itself, so there the socket is always present.
  skip:
    postgres.skip ||
    (!local && process.env.REQUIRE_POSTGRES !== '1' ? `no PostgreSQL socket in ${SOCKET_DIR}` : false),
}, () => {
  let database: TestDatabase;
  let opened: Database;
  before(async () => {
    database = await freshDatabase('postgres');
    opened = openDatabase(throughSocket(database.url));
  });
  after(async () => {
    await opened?.close();
    await database?.drop();
  });

  test('migrates, writes, reads and listens over the socket, and names it in its location', async () => {
    await migrateToLatest(opened.db);
    await opened.listenForChanges?.();
    await opened.db
      .insertInto('counters')
      .values({ key: 'over-the-socket', count: 3, expires_at: 1 })
      .execute();
    const row = await sql<{ address: string | null; count: number }>`
      select inet_server_addr()::text as address, (select count from counters where key = 'over-the-socket') as count
    `.execute(opened.db);
    assert.deepEqual(
      row.rows,
      [{ address: null, count: 3 }],
      'a Unix-socket connection has no server address',
    );
    assert.equal(opened.location, `postgres://${SOCKET_DIR}${new URL(database.url).pathname}`);
    assert.equal(opened.authCache?.active, true, 'the change listener is up, so lookups are cached');
  });

  test('the CLI connects the same way', async () => {
    const created = await runCli(throughSocket(database.url), [
      'member',
      'create',
      '--email',
      'socket@example.org',
      '--name',
      'Sock',
      '--json',
    ]);
    assert.equal(created.code, 0, created.stderr);
    const member = JSON.parse(created.stdout);
    const stored = await opened.db
      .selectFrom('members')
      .select(['id', 'email'])
      .where('id', '=', member.id)
      .executeTakeFirst();
    assert.deepEqual(stored, { id: member.id, email: 'socket@example.org' });
  });
});
