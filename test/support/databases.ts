import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export type EngineName = 'sqlite' | 'postgres';

export const postgresUrl = process.env.TEST_POSTGRES_URL;

/**
 * TEST_ENGINE=sqlite or postgres: only that engine's variants of the suites that run on both. `.ci/run`
 * runs both on Node 24 and shares them out between its later lines, SQLite on 22 and PostgreSQL on 26
 * (docs/development.md, "Node lines"); the other engine's variants are reported as skipped.
 */
const onlyEngine = process.env.TEST_ENGINE || undefined;
if (onlyEngine !== undefined && onlyEngine !== 'sqlite' && onlyEngine !== 'postgres')
  throw new Error(`TEST_ENGINE is sqlite or postgres, not ${onlyEngine}`);

function leftOut(name: EngineName): string | false {
  return onlyEngine !== undefined && onlyEngine !== name
    ? `TEST_ENGINE=${onlyEngine}: the ${name} variants run on other Node lines of .ci/run`
    : false;
}

/** Engines this run covers: SQLite always, PostgreSQL when the runner found one (unless TEST_ENGINE says). */
export const engines: { name: EngineName; skip: string | false }[] = [
  { name: 'sqlite', skip: leftOut('sqlite') },
  {
    name: 'postgres',
    skip: leftOut('postgres') || (postgresUrl ? false : 'PostgreSQL not reachable (set TEST_POSTGRES_URL)'),
  },
];

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A brand-new, empty database of the given engine: a temp SQLite file or a fresh PostgreSQL database. */
export async function freshDatabase(engine: EngineName): Promise<TestDatabase> {
  if (engine === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'agent-commons-'));
    return {
      url: `sqlite:${join(dir, 'agent.db')}`,
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  if (!postgresUrl) throw new Error('no PostgreSQL for this run');
  const name = `ac_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: postgresUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(postgresUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: postgresUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

/**
 * A pool that ignores its connections' errors once it is being ended: pg ends a pool before its
 * connections' Terminate reaches the server, and the DROP DATABASE ... WITH (FORCE) of `drop` that
 * follows then ends such a connection with an error of its own, which nothing would listen to. An
 * error before that is thrown, as it would be without a listener, and fails the run.
 */
export function testPool(url: string, max: number): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max });
  const afterEnd = (error: Error) => {
    if (!pool.ending) throw error;
  };
  pool.on('error', afterEnd);
  pool.on('connect', (client) => client.on('error', afterEnd));
  return pool;
}
