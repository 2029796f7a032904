// Backups, as docs/deployment.md#backups tells an operator to take and restore them:
// taken while the real server runs and takes writes, restored to a new place, and served from there.
// SQLite: `agent-commons backup FILE` (the online backup API); PostgreSQL: pg_dump --format=custom,
// then pg_restore into an empty database.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { promisify } from 'node:util';
import SQLite from 'better-sqlite3';
import { engines, freshDatabase } from './support/databases.ts';
import { killAllChildren, runCli, runCliJson, type ServerProcess, startServer } from './support/processes.ts';

const run = promisify(execFile);
const SERVER_ENV = { LIMIT_HIGHLIGHTS_PER_DAY: '100000', LIMIT_TOKEN_PER_MINUTE: '100000' };

after(killAllChildren);

/** Submits stories, four at a time, until stop() is called; returns the ids answered 202 and when. */
function writeLoad(server: ServerProcess, token: string, engine: string) {
  const acknowledged: { id: string; at: number }[] = [];
  let stopped = false;
  let next = 0;
  const lane = async () => {
    while (!stopped) {
      const id = `2026-07-16-${engine}-backup-${next++}`;
      const response = await fetch(`${server.baseUrl}/api/ingest/highlights/pending`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ id, event_title: 'Backup night', dek: `story ${id}` }),
      });
      await response.arrayBuffer();
      assert.equal(response.status, 202);
      acknowledged.push({ id, at: Date.now() });
    }
  };
  const lanes = Promise.all([lane(), lane(), lane(), lane()]);
  return {
    acknowledged,
    stop: async () => {
      stopped = true;
      await lanes;
    },
  };
}

async function waitFor(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The restored copy served by a server of its own: each story acknowledged before the backup is there. */
async function servedFromCopy(url: string, token: string, ids: string[]): Promise<string[]> {
  const restored = await startServer(url, { args: ['--no-seed'], env: SERVER_ENV });
  try {
    const ready = await fetch(`${restored.baseUrl}/readyz`);
    assert.equal(ready.status, 200, await ready.text());
    const missing: string[] = [];
    for (const id of ids) {
      const response = await fetch(
        `${restored.baseUrl}/api/ingest/highlights/pending?id=${encodeURIComponent(id)}`,
        { headers: { authorization: `Bearer ${token}` } },
      );
      const body = (await response.json()) as { status?: string };
      if (response.status !== 200 || body.status !== 'pending') missing.push(id);
    }
    return missing;
  } finally {
    await restored.kill('SIGTERM');
  }
}

describe('backups taken while the server runs', { concurrency: true }, () => {
  for (const engine of engines) {
    test(`restored and served (${engine.name})`, { skip: engine.skip }, async (t) => {
      const database = await freshDatabase(engine.name);
      const restoredDatabase = await freshDatabase(engine.name);
      const dir = mkdtempSync(join(tmpdir(), 'agent-commons-backup-'));
      let server: ServerProcess | undefined;
      try {
        server = await startServer(database.url, { args: ['--no-seed'], env: SERVER_ENV });
        const member = await runCliJson(database.url, [
          'member',
          'create',
          '--email',
          'backup@test.example',
          '--name',
          'Bea Backup',
          '--tier',
          'core',
        ]);
        const { token } = await runCliJson(database.url, [
          'token',
          'mint',
          '--member',
          member.id,
          '--scopes',
          'events:submit_recap',
        ]);
        const load = writeLoad(server, token, engine.name);
        await waitFor(() => load.acknowledged.length >= 50);

        const backupStarted = Date.now();
        // Every story answered 202 so far is in the backup (one answered later may be too). Read now,
        // not by time afterwards: an answer in the same millisecond as backupStarted came before it.
        const before = load.acknowledged.map(({ id }) => id);
        let restoredUrl: string;
        if (engine.name === 'sqlite') {
          const file = join(dir, 'copy.db');
          const taken = await runCli(database.url, ['backup', file, '--json']);
          assert.equal(taken.code, 0, taken.stderr);
          const result = JSON.parse(taken.stdout);
          assert.equal(result.file, file);
          assert.ok(result.pages > 0 && result.bytes > 0);
          assert.ok(!existsSync(`${file}.partial`));
          // A second backup to the same file is refused unless --force.
          const again = await runCli(database.url, ['backup', file]);
          assert.equal(again.code, 1);
          assert.match(again.stderr, /exists \(--force replaces it\)/);
          // Restore: the copy becomes the database file of a new server (docs/deployment.md#backups).
          const copy = new SQLite(file, { readonly: true });
          assert.equal(copy.pragma('integrity_check', { simple: true }), 'ok');
          assert.equal(copy.pragma('journal_mode', { simple: true }), 'delete');
          copy.close();
          restoredUrl = `sqlite:${file}`;
        } else {
          const dump = join(dir, 'agent.dump');
          await run('pg_dump', ['--format=custom', '--no-owner', `--file=${dump}`, database.url]);
          await run('pg_restore', [
            '--no-owner',
            '--exit-on-error',
            `--dbname=${restoredDatabase.url}`,
            dump,
          ]);
          restoredUrl = restoredDatabase.url;
          // The backup command says where PostgreSQL's backups come from.
          const refused = await runCli(database.url, ['backup', join(dir, 'x.db')]);
          assert.equal(refused.code, 1);
          assert.match(refused.stderr, /pg_dump/);
        }
        const backupEnded = Date.now();
        await load.stop();
        const during = load.acknowledged.filter(({ at }) => at >= backupStarted && at <= backupEnded).length;
        t.diagnostic(
          `${before.length} stories acknowledged before the backup, ${during} while it was taken, ${load.acknowledged.length} in all`,
        );
        assert.ok(before.length >= 50);
        assert.deepEqual(await servedFromCopy(restoredUrl, token, before), []);
      } finally {
        await server?.kill();
        await database.drop();
        await restoredDatabase.drop();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
