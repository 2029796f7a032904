// Acknowledged writes survive kill -9 (ARCHITECTURE.md §5): the real server runs as a child process,
// takes a burst of highlight submissions, and is SIGKILLed mid-burst. Every id that got a 202 must be
// in the database when the server comes back.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { openDatabase } from '../src/storage/database.ts';
import { engines, freshDatabase } from './support/databases.ts';
import { killAllChildren, runCliJson, type ServerProcess, startServer } from './support/processes.ts';

const SERVER_ENV = { LIMIT_HIGHLIGHTS_PER_DAY: '100000', LIMIT_TOKEN_PER_MINUTE: '100000' };
const IN_FLIGHT = 8;
const KILL_AFTER = 150;

interface Burst {
  acknowledged: string[];
  failed: number;
  unexpected: string[];
}

/** Submits distinct stories, IN_FLIGHT at a time, and SIGKILLs the server after KILL_AFTER 202s. */
async function burstAndKill(server: ServerProcess, token: string, run: string): Promise<Burst> {
  const burst: Burst = { acknowledged: [], failed: 0, unexpected: [] };
  let next = 0;
  let killed = false;
  // Submissions keep flowing until the process is gone, so the kill lands on requests in progress.
  let dead = false;
  void server.exited.then(() => {
    dead = true;
  });
  const worker = async () => {
    // A safety stop: the server is killed long before this many submissions.
    while (!dead && next < 5000) {
      const id = `2026-07-16-${run}-story-${next++}`;
      let status: number;
      let body: { id?: string; status?: string };
      try {
        const response = await fetch(`${server.baseUrl}/api/ingest/highlights/pending`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ id, event_title: 'Durability night', dek: `story ${id}` }),
          signal: AbortSignal.timeout(5000),
        });
        status = response.status;
        body = (await response.json()) as typeof body;
      } catch {
        // The connection died with the server: this submission was never acknowledged.
        burst.failed++;
        continue;
      }
      if (status !== 202 || body.id !== id || body.status !== 'pending') {
        burst.unexpected.push(`${id}: ${status} ${JSON.stringify(body)}`);
        continue;
      }
      burst.acknowledged.push(id);
      if (burst.acknowledged.length >= KILL_AFTER && !killed) {
        killed = true;
        server.child.kill('SIGKILL');
      }
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return burst;
}

async function storedIds(databaseUrl: string): Promise<Set<string>> {
  if (databaseUrl.startsWith('sqlite:')) {
    // Straight from the file, with no code of ours in between.
    const file = new SQLite(databaseUrl.slice('sqlite:'.length), { readonly: true });
    try {
      assert.equal(file.pragma('integrity_check', { simple: true }), 'ok');
      const rows = file.prepare("SELECT id FROM highlights WHERE status = 'pending'").all() as {
        id: string;
      }[];
      return new Set(rows.map((r) => r.id));
    } finally {
      file.close();
    }
  }
  const database = openDatabase(databaseUrl);
  try {
    const rows = await database.db
      .selectFrom('highlights')
      .select('id')
      .where('status', '=', 'pending')
      .execute();
    return new Set(rows.map((r) => r.id));
  } finally {
    await database.close();
  }
}

after(killAllChildren);

// The engines run side by side: most of each test is waiting for a process to boot.
describe('kill -9 durability', { concurrency: true }, () => {
  for (const engine of engines) {
    test(`every 202 from before the kill is stored after the restart (${engine.name})`, {
      skip: engine.skip,
    }, async (t) => {
      const database = await freshDatabase(engine.name);
      let server: ServerProcess | undefined;
      try {
        const member = await runCliJson(database.url, [
          'member',
          'create',
          '--email',
          'durable@test.example',
          '--name',
          'Dora Durable',
          '--tier',
          'core',
        ]);
        // The database is migrated now, so the server can boot while the token is minted.
        const [minted, booted] = await Promise.all([
          runCliJson(database.url, [
            'token',
            'mint',
            '--member',
            member.id,
            '--scopes',
            'events:submit_recap',
          ]),
          startServer(database.url, { args: ['--no-seed'], env: SERVER_ENV }),
        ]);
        server = booted;

        const burst = await burstAndKill(server, minted.token, engine.name);
        const exit = await server.exited;
        assert.equal(exit.signal, 'SIGKILL', 'the server died of the kill, not on its own');
        assert.deepEqual(burst.unexpected, [], 'before the kill every submission was accepted');
        assert.ok(burst.acknowledged.length >= KILL_AFTER, `${burst.acknowledged.length} acknowledged`);
        assert.equal(new Set(burst.acknowledged).size, burst.acknowledged.length);
        t.diagnostic(`${burst.acknowledged.length} acknowledged, ${burst.failed} cut off by the kill`);

        server = await startServer(database.url, { args: ['--no-seed'], env: SERVER_ENV });
        const stored = await storedIds(database.url);
        const lost = burst.acknowledged.filter((id) => !stored.has(id));
        assert.deepEqual(
          lost,
          [],
          `${lost.length} of ${burst.acknowledged.length} acknowledged stories lost`,
        );

        // The restarted server reports each acknowledged story as pending to its author.
        const polls = [...burst.acknowledged];
        const notPending: string[] = [];
        await Promise.all(
          Array.from({ length: IN_FLIGHT }, async () => {
            for (let id = polls.pop(); id !== undefined; id = polls.pop()) {
              const response = await fetch(
                `${server!.baseUrl}/api/ingest/highlights/pending?id=${encodeURIComponent(id)}`,
                { headers: { authorization: `Bearer ${minted.token}` }, signal: AbortSignal.timeout(10_000) },
              );
              const body = (await response.json()) as { status?: string };
              if (response.status !== 200 || body.status !== 'pending') notPending.push(id);
            }
          }),
        );
        assert.deepEqual(notPending, []);

        // And it takes new work.
        const fresh = await fetch(`${server.baseUrl}/api/ingest/highlights/pending`, {
          method: 'POST',
          headers: { authorization: `Bearer ${minted.token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ id: `2026-07-16-${engine.name}-after-restart` }),
          signal: AbortSignal.timeout(5000),
        });
        assert.equal(fresh.status, 202);
      } finally {
        await server?.kill();
        await database.drop();
      }
    });
  }
});
