// The operator CLI as operators run it: `node bin/agent-commons.js <command>` in a child process,
// against a temp SQLite file and a fresh PostgreSQL database. What each command wrote is read back
// from the database; tokens it mints are used against a server on the same database.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { sha256 } from '../src/secrets.ts';
import { openDatabase } from '../src/storage/database.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines, freshDatabase, type TestDatabase } from './support/databases.ts';
import { killAllChildren, runCli, runCliJson, type ServerProcess, startServer } from './support/processes.ts';

const TIERS = ['public', 'member', 'resident', 'core', 'operator'];
const TOKEN = /^agt_[A-Za-z0-9_-]{43}$/;

after(killAllChildren);

function assertRefused(result: { code: number | null; stdout: string; stderr: string }, pattern: RegExp) {
  assert.equal(result.code, 1, `expected exit 1, got ${result.code}: ${result.stdout}${result.stderr}`);
  assert.match(result.stderr, pattern);
}

// The engines run side by side; within one engine the steps build on each other, in order.
describe('agent-commons CLI', { concurrency: true }, () => {
  for (const engine of engines) {
    describe(`admin commands (${engine.name})`, { skip: engine.skip, concurrency: 1 }, () => {
      let database: TestDatabase;
      let t: TestApp;
      let url: string;
      let core: { id: string; email: string; tier: string };
      let mina: { id: string; tier: string };
      let pat: { id: string; tier: string };
      let olga: { id: string; tier: string };
      let coreToken: string;
      // PostgreSQL repeats every command whose SQL it runs; refusals decided before any SQL run once.
      const everything = engine.name === 'sqlite';

      before(async () => {
        database = await freshDatabase(engine.name);
        url = database.url;
      });
      after(async () => {
        await t?.close();
        await database?.drop();
      });

      test('migrate creates the schema in an empty database', async () => {
        const result = await runCli(url, ['migrate']);
        assert.equal(result.code, 0, result.stderr);
        assert.equal(result.stdout, `migrated (${engine.name})\n`);
        const opened = openDatabase(url);
        try {
          const tables = (await opened.db.introspection.getTables()).map((table) => table.name);
          for (const name of ['members', 'tokens', 'device_grants', 'highlights', 'feedback', 'counters']) {
            assert.ok(tables.includes(name), `table ${name} exists (tables: ${tables.join(', ')})`);
          }
          assert.deepEqual(
            await opened.db.selectFrom('members').select('id').execute(),
            [],
            'nothing seeded',
          );
        } finally {
          await opened.close();
        }
      });

      test('seed --demo fills an empty database once; a second seed is refused', async () => {
        const seeded = await runCli(url, ['seed', '--demo']);
        assert.equal(seeded.code, 0, seeded.stderr);
        assert.match(seeded.stdout, /seeded the demo community/);

        const [listed, again] = await Promise.all([
          runCliJson<{ id: string; tier: string; email: string }[]>(url, ['member', 'list']),
          runCli(url, ['seed', '--demo']),
        ]);
        assert.deepEqual([...new Set(listed.map((m) => m.tier))].sort(), [...TIERS].sort());
        assertRefused(again, /already has members/);

        // The server the tokens are tried against shares this database from here on.
        t = await startTestApp({ database, limits: { highlightsPerDay: 100 } });
        // The CLI runs on the wall clock; the server's clock starts there too so expiries agree.
        t.clock.set(Date.now());
        const members = await t.deps.db.selectFrom('members').selectAll().execute();
        assert.equal(members.length, listed.length, 'the refused seed added nothing');
        assert.deepEqual(members.map((m) => m.id).sort(), listed.map((m) => m.id).sort());
        mina = members.find((m) => m.tier === 'member')!;
        pat = members.find((m) => m.tier === 'public')!;
        olga = members.find((m) => m.tier === 'operator')!;
        for (const table of ['events', 'resources', 'corpus_documents'] as const) {
          const rows = await t.deps.db.selectFrom(table).select('id').execute();
          assert.ok(rows.length > 0, `${table} seeded`);
        }
      });

      test('member create, duplicate email and unknown tier refused, set-tier', async () => {
        core = await runCliJson(url, [
          'member',
          'create',
          '--email',
          'Cli.Core@Test.Example',
          '--name',
          'Cleo Core',
          '--tier',
          'core',
        ]);
        assert.match(core.id, /^mem_/);
        assert.equal(core.email, 'cli.core@test.example');
        assert.equal(core.tier, 'core');
        const stored = await t.deps.db
          .selectFrom('members')
          .selectAll()
          .where('id', '=', core.id)
          .executeTakeFirstOrThrow();
        assert.equal(stored.name, 'Cleo Core');
        assert.equal(stored.tier, 'core');

        const [duplicate, setTier, unknownTier] = await Promise.all([
          runCli(url, ['member', 'create', '--email', 'cli.core@TEST.example', '--name', 'Again', '--json']),
          runCli(url, ['member', 'set-tier', pat.id, 'resident', '--by', olga.id]),
          // Refused before any SQL runs, so one engine is enough.
          everything
            ? runCli(url, [
                'member',
                'create',
                '--email',
                'new@test.example',
                '--name',
                'N',
                '--tier',
                'royalty',
              ])
            : undefined,
        ]);
        assertRefused(duplicate, new RegExp(`already exists \\(${core.id}\\)`));
        assert.equal(duplicate.stdout, '', 'nothing printed on stdout for a refusal');
        if (unknownTier) {
          assertRefused(
            unknownTier,
            /unknown tier "royalty" \(tiers: public, member, resident, core, operator\)/,
          );
        }
        assert.equal(setTier.code, 0, setTier.stderr);
        assert.equal(setTier.stdout, `${pat.id} is now resident\n`);

        const emails = await t.deps.db.selectFrom('members').select(['email', 'id', 'tier']).execute();
        assert.equal(emails.filter((m) => m.email === 'cli.core@test.example').length, 1);
        assert.ok(
          !emails.some((m) => m.email === 'new@test.example'),
          'the unknown-tier member was not created',
        );
        assert.equal(emails.find((m) => m.id === pat.id)!.tier, 'resident');
      });

      test('token mint: the token works against the server; sandbox; over-tier scopes refused', async () => {
        const mint = (member: string, scopes: string, ...flags: string[]) =>
          runCli(url, ['token', 'mint', '--member', member, '--scopes', scopes, ...flags, '--json']);
        const [mintedRun, sandboxedRun, overTier] = await Promise.all([
          mint(core.id, 'events:submit_recap, read:public'),
          // The sandbox flag and the tier check are decided before any SQL: one engine is enough.
          everything ? mint(core.id, 'events:submit_recap', '--sandbox') : undefined,
          everything ? mint(mina.id, 'read:public,events:submit_recap,resources:book') : undefined,
        ]);
        assert.equal(mintedRun.code, 0, mintedRun.stderr);
        const minted = JSON.parse(mintedRun.stdout);
        assert.match(minted.token, TOKEN);
        assert.deepEqual(minted.scopes, ['events:submit_recap', 'read:public']);
        assert.ok(minted.token.startsWith(minted.prefix), 'the prefix is the start of the token');
        coreToken = minted.token;

        const stored = await t.deps.db
          .selectFrom('tokens')
          .selectAll()
          .where('id', '=', minted.id)
          .executeTakeFirstOrThrow();
        assert.equal(stored.hash, sha256(minted.token), 'only the hash is stored');
        assert.equal(stored.member_id, core.id);
        assert.equal(stored.source, 'cli');
        assert.equal(stored.sandbox, 0);
        assert.ok(!JSON.stringify(stored).includes(minted.token));

        const pending = await t.call('GET', '/api/ingest/highlights/pending', { token: minted.token });
        assert.equal(pending.status, 200, pending.text);
        assert.deepEqual(pending.body, { ok: true, count: 0 });

        if (sandboxedRun) {
          assert.equal(sandboxedRun.code, 0, sandboxedRun.stderr);
          const sandboxed = JSON.parse(sandboxedRun.stdout);
          const sandboxRow = await t.deps.db
            .selectFrom('tokens')
            .select(['sandbox', 'member_id'])
            .where('hash', '=', sha256(sandboxed.token))
            .executeTakeFirstOrThrow();
          assert.equal(sandboxRow.sandbox, 1);
          const simulated = await t.call('POST', '/api/ingest/highlights/pending', {
            token: sandboxed.token,
            body: { id: 'sandbox-story' },
          });
          assert.equal(simulated.status, 200, simulated.text);
          assert.equal(simulated.body.sandbox, true);
          assert.equal(simulated.body.simulated, true);
          const nothing = await t.deps.db.selectFrom('highlights').select('id').execute();
          assert.deepEqual(nothing, [], 'the sandbox submission stored nothing');
        }

        if (overTier) {
          assertRefused(overTier, /not granted by tier member/);
          assert.match(overTier.stderr, /denied_scopes: events:submit_recap,resources:book/);
          const minaTokens = await t.deps.db
            .selectFrom('tokens')
            .select('id')
            .where('member_id', '=', mina.id)
            .execute();
          assert.deepEqual(minaTokens, [], 'no token minted for the refused request');
        }
      });

      test('token list --json never prints hashes or plaintext', async () => {
        const result = await runCli(url, ['token', 'list', '--json']);
        assert.equal(result.code, 0, result.stderr);
        const listed = JSON.parse(result.stdout) as Record<string, unknown>[];
        const rows = await t.deps.db.selectFrom('tokens').select(['id', 'hash']).execute();
        assert.deepEqual(listed.map((entry) => entry.id).sort(), rows.map((row) => row.id).sort());
        assert.ok(rows.length > 0);
        for (const entry of listed) {
          assert.ok(!('hash' in entry), 'no hash field');
          assert.equal(typeof entry.prefix, 'string');
          assert.ok(Array.isArray(entry.scopes), 'scopes are listed as an array, as mint prints them');
          assert.equal(
            typeof entry.created_at,
            'number',
            'times print as epoch milliseconds on every engine',
          );
          assert.ok(entry.sandbox === 0 || entry.sandbox === 1);
        }
        for (const row of rows) assert.ok(!result.stdout.includes(row.hash), 'no stored hash printed');
        assert.ok(!result.stdout.includes(coreToken), 'no plaintext printed');
        assert.doesNotMatch(result.stdout, /agt_[A-Za-z0-9_-]{43}/);
      });

      test('device approve and deny decide a signup started over HTTP', async () => {
        const start = async () => {
          const response = await t.call('POST', '/api/agent/signup/start', {
            body: { scopes: ['read:public', 'events:rsvp', 'resources:book'], client_name: 'cli test' },
          });
          assert.equal(response.status, 200, response.text);
          return response.body as { device_code: string; user_code: string };
        };
        const poll = (code: string) =>
          t.call('GET', `/api/agent/signup/poll?device_code=${encodeURIComponent(code)}`);
        const approved = await start();
        const denied = await start();
        const [approve, deny] = await Promise.all([
          runCli(url, ['device', 'approve', approved.user_code, '--member', mina.id]),
          runCli(url, ['device', 'deny', denied.user_code, '--member', mina.id, '--reason', 'not my agent']),
        ]);
        assert.equal(approve.code, 0, approve.stderr);
        assert.equal(approve.stdout, 'approved; granted: read:public,events:rsvp; denied: resources:book\n');
        assert.equal(deny.code, 0, deny.stderr);
        assert.equal(deny.stdout, 'denied\n');

        const delivered = await poll(approved.device_code);
        assert.equal(delivered.status, 200, delivered.text);
        assert.equal(delivered.body.status, 'completed');
        assert.match(delivered.body.agent_token, TOKEN);
        assert.equal(delivered.body.member_id, mina.id);
        assert.deepEqual(delivered.body.granted_scopes, ['read:public', 'events:rsvp']);
        assert.deepEqual(delivered.body.denied_scopes, ['resources:book']);
        const token = await t.deps.db
          .selectFrom('tokens')
          .selectAll()
          .where('hash', '=', sha256(delivered.body.agent_token))
          .executeTakeFirstOrThrow();
        assert.equal(token.member_id, mina.id);
        assert.equal(token.source, 'device');

        const cancelled = await poll(denied.device_code);
        assert.equal(cancelled.status, 200, cancelled.text);
        assert.deepEqual(cancelled.body, { status: 'cancelled', reason: 'not my agent' });
      });

      test('highlights list, approve and reject; a second decision is refused', async () => {
        const ids = [`2026-07-16-cleo-${engine.name}-a`, `2026-07-16-cleo-${engine.name}-b`];
        for (const id of ids) {
          const submitted = await t.call('POST', '/api/ingest/highlights/pending', {
            token: coreToken,
            body: { id, event_title: 'Open Hack Night', dek: 'We built things.' },
          });
          assert.equal(submitted.status, 202, submitted.text);
        }
        const listed = await runCliJson<{ id: string; status: string; member_id: string; story: any }[]>(
          url,
          ['highlights', 'list'],
        );
        assert.deepEqual(listed.map((h) => h.id).sort(), [...ids].sort());
        for (const entry of listed) {
          assert.equal(entry.status, 'pending');
          assert.equal(entry.member_id, core.id);
          assert.equal(entry.story.id, entry.id, 'the story is printed as JSON, not as a string');
          assert.equal(entry.story.event_title, 'Open Hack Night');
        }

        const [approve, reject] = await Promise.all([
          runCli(url, ['highlights', 'approve', ids[0], '--by', olga.id]),
          runCli(url, ['highlights', 'reject', ids[1], '--by', olga.id]),
        ]);
        assert.equal(approve.code, 0, approve.stderr);
        assert.equal(approve.stdout, `approved ${ids[0]}\n`);
        assert.equal(reject.code, 0, reject.stderr);
        assert.equal(reject.stdout, `rejected ${ids[1]}\n`);

        for (const id of ids) {
          const polled = await t.call('GET', `/api/ingest/highlights/pending?id=${encodeURIComponent(id)}`, {
            token: coreToken,
          });
          assert.equal(polled.status, 200, polled.text);
          assert.deepEqual(polled.body, { status: 'gone', id });
        }
        const rows = await t.deps.db
          .selectFrom('highlights')
          .select(['id', 'status', 'decided_by'])
          .orderBy('id')
          .execute();
        assert.deepEqual(rows, [
          { id: ids[0], status: 'active', decided_by: olga.id },
          { id: ids[1], status: 'rejected', decided_by: olga.id },
        ]);

        const audit = await t.deps.db
          .selectFrom('operator_audit')
          .select(['operator_id', 'action', 'target', 'outcome'])
          .where('target', 'in', ids)
          .orderBy('target')
          .execute();
        assert.deepEqual(audit, [
          { operator_id: olga.id, action: 'highlight.approve', target: ids[0], outcome: 'done' },
          { operator_id: olga.id, action: 'highlight.reject', target: ids[1], outcome: 'done' },
        ]);

        const [again, notOperator, nobody] = await Promise.all([
          runCli(url, ['highlights', 'approve', ids[1], '--by', olga.id]),
          runCli(url, ['highlights', 'approve', ids[1], '--by', core.id]),
          runCli(url, ['highlights', 'approve', ids[1], '--by', 'nobody@nowhere.example']),
        ]);
        assertRefused(again, new RegExp(`${ids[1]} was already decided \\(not_pending\\)`));
        // --by names the operator; the pipeline checks their tier as it does for every door.
        assertRefused(
          notOperator,
          /Scope admin:highlights_review needs tier operator; the member is on tier core/,
        );
        assertRefused(nobody, /no member nobody@nowhere\.example/);
        const unchanged = await t.deps.db
          .selectFrom('highlights')
          .select('status')
          .where('id', '=', ids[1])
          .executeTakeFirstOrThrow();
        assert.equal(unchanged.status, 'rejected');
      });
    });
  }

  describe('serve (what `npm start` runs)', { concurrency: true }, () => {
    const dirs: string[] = [];
    after(() => {
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    });
    const newPath = () => {
      const dir = mkdtempSync(join(tmpdir(), 'agent-commons-serve-'));
      dirs.push(dir);
      return join(dir, 'nested', 'agent.db');
    };
    const count = (file: string, table: string, where = '') => {
      const db = new SQLite(file, { readonly: true });
      try {
        return (db.prepare(`SELECT count(*) AS n FROM ${table} ${where}`).get() as { n: number }).n;
      } finally {
        db.close();
      }
    };

    test('on a brand-new SQLite path it seeds the demo community and prints the URL', async () => {
      const file = newPath();
      let server: ServerProcess | undefined;
      try {
        server = await startServer(`sqlite:${file}`);
        assert.match(server.stdout(), /listening on http:\/\/127\.0\.0\.1:\d+ /);
        for (const tier of TIERS) assert.equal(count(file, 'members', `WHERE tier = '${tier}'`), 1, tier);
        assert.ok(count(file, 'events') > 0, 'events');
        assert.ok(count(file, 'resources') > 0, 'resources');
        assert.ok(count(file, 'corpus_documents') > 0, 'corpus documents');
        const home = await fetch(`${server.baseUrl}/`, { signal: AbortSignal.timeout(5000) });
        assert.equal(home.status, 200);
        await home.body?.cancel();
        const stopped = await server.kill('SIGTERM');
        assert.equal(stopped.code, 0, 'SIGTERM stops the server cleanly');
      } finally {
        await server?.kill();
      }
    });

    test('with --no-seed it migrates but does not seed', async () => {
      const file = newPath();
      let server: ServerProcess | undefined;
      try {
        server = await startServer(`sqlite:${file}`, { args: ['--no-seed'] });
        assert.match(server.stdout(), /listening on http:\/\/127\.0\.0\.1:\d+ /);
        assert.equal(count(file, 'members'), 0);
        assert.equal(count(file, 'events'), 0);
        assert.equal(count(file, 'corpus_documents'), 0);
      } finally {
        await server?.kill();
      }
    });
  });
});
