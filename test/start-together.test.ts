// Instances that start at the same moment on a new PostgreSQL database: the migrations, the demo
// seed (SEED_DEMO at its default) and every other first-run step run once, and all of them serve.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { freshDatabase, postgresUrl } from './support/databases.ts';
import { killAllChildren, startServer } from './support/processes.ts';

const INSTANCES = 3;

after(killAllChildren);

describe('three instances started at once on a new PostgreSQL database', {
  skip: !postgresUrl && 'no PostgreSQL',
}, () => {
  test('all start, the demo community is seeded once', async () => {
    const database = await freshDatabase('postgres');
    try {
      const servers = await Promise.all(
        Array.from({ length: INSTANCES }, () => startServer(database.url, { timeoutMs: 90_000 })),
      );
      for (const server of servers) {
        const health = await fetch(`${server.baseUrl}/healthz`);
        assert.equal(health.status, 200, server.stderr());
        const ready = await fetch(`${server.baseUrl}/readyz`);
        assert.equal(ready.status, 200, await ready.text());
      }
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      try {
        const members = await client.query<{ email: string; n: string }>(
          'select email, count(*) as n from members group by email having count(*) > 1',
        );
        assert.deepEqual(members.rows, [], 'no member twice');
        const seeded = await client.query<{ n: string }>('select count(*) as n from members');
        assert.ok(Number(seeded.rows[0]!.n) > 0, 'the demo community is there');
        const documents = await client.query<{ title: string; url: string | null }>(
          'select title, url from corpus_documents group by title, url having count(*) > 1',
        );
        assert.deepEqual(documents.rows, [], 'no corpus document twice');
      } finally {
        await client.end();
      }
      const codes = await Promise.all(servers.map((server) => server.kill('SIGTERM')));
      for (const exit of codes) assert.equal(exit.code, 0, 'each drains and exits 0');
    } finally {
      await killAllChildren();
      await database.drop();
    }
  });
});
