// `agent-commons retention sweep` as operators run it, in a child process against a temp SQLite
// file and a fresh PostgreSQL database: the dry run's table and its counts, then the sweep itself.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { MS } from '../src/clock.ts';
import { openDatabase } from '../src/storage/database.ts';
import { engines, freshDatabase, type TestDatabase } from './support/databases.ts';
import { killAllChildren, runCli } from './support/processes.ts';
import { countRows, writeRow } from './support/retention-rows.ts';

after(killAllChildren);

for (const engine of engines) {
  describe(`retention sweep command (${engine.name})`, { skip: engine.skip, concurrency: 1 }, () => {
    let database: TestDatabase;
    after(() => database?.drop());

    test('--dry-run counts per kind and removes nothing; the sweep then removes those rows', async () => {
      database = await freshDatabase(engine.name);
      assert.equal((await runCli(database.url, ['migrate'])).code, 0);
      const opened = openDatabase(database.url);
      const now = Date.now();
      try {
        await opened.db
          .insertInto('members')
          .values({
            id: 'm1',
            email: 'm1@example.org',
            name: 'M',
            handle: 'm1',
            tier: 'member',
            created_at: 0,
            updated_at: 0,
          })
          .execute();
        for (let i = 0; i < 3; i++) await writeRow(opened.db, 'activity', 'm1', now - 200 * MS.day);
        await writeRow(opened.db, 'activity', 'm1', now - MS.day);
        await writeRow(opened.db, 'eventLog', 'm1', now - 400 * MS.day);
        await writeRow(opened.db, 'operatorAudit', 'm1', now - 400 * MS.day);
      } finally {
        await opened.close();
      }
      const env = { RETENTION_OPERATOR_AUDIT_DAYS: 'keep' };
      const dry = await runCli(database.url, ['retention', 'sweep', '--dry-run'], { env });
      assert.equal(dry.code, 0, dry.stderr);
      const lines = dry.stdout.trimEnd().split('\n');
      assert.match(lines[0], /^kind +days +cutoff +would_remove$/);
      assert.match(
        lines.find((l) => l.startsWith('activity')) ?? '',
        /^activity +180 +\d{4}-\d\d-\d\dT[\d:.]+Z +3$/,
      );
      assert.match(lines.find((l) => l.startsWith('eventLog')) ?? '', /^eventLog +365 +\S+Z +1$/);
      assert.match(lines.find((l) => l.startsWith('operatorAudit')) ?? '', /^operatorAudit +keep +- +0$/);
      assert.equal(lines.at(-1), 'would remove 4 rows; nothing removed');

      const check = openDatabase(database.url);
      try {
        assert.equal(await countRows(check.db, 'activity'), 4, 'the dry run removed nothing');
        const swept = await runCli(database.url, ['retention', 'sweep', '--json'], { env });
        assert.equal(swept.code, 0, swept.stderr);
        const report = JSON.parse(swept.stdout) as {
          ran: boolean;
          dry_run: boolean;
          kinds: Record<string, unknown>[];
        };
        assert.equal(report.ran, true);
        assert.equal(report.dry_run, false);
        const removed = Object.fromEntries(report.kinds.map((k) => [k.kind, k.removed]));
        assert.equal(removed.activity, 3);
        assert.equal(removed.eventLog, 1);
        assert.equal(removed.operatorAudit, 0);
        assert.equal(report.kinds.find((k) => k.kind === 'operatorAudit')?.cutoff, null);
        assert.equal(await countRows(check.db, 'activity'), 1);
        assert.equal(await countRows(check.db, 'eventLog'), 0);
        assert.equal(await countRows(check.db, 'operatorAudit'), 1);
        // A bad setting is refused with the variable's name, before anything is touched.
        const bad = await runCli(database.url, ['retention', 'sweep'], {
          env: { RETENTION_ACTIVITY_DAYS: 'soon' },
        });
        assert.equal(bad.code, 1);
        assert.match(bad.stderr, /RETENTION_ACTIVITY_DAYS must be a whole number of days/);
      } finally {
        await check.close();
      }
    });
  });
}
