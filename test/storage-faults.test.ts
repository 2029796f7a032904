// Storage that cannot write, and writes that wait for a lock another session holds. On SQLite the
// database file lives on a small tmpfs that another file fills: writes must be answered 503
// storage_unavailable with Retry-After (never 500), /readyz 503 with the reason, one log line as it
// starts and one as it ends, and once space is freed the service writes again with no restart and
// nothing acknowledged lost. On PostgreSQL an admin session holds a table lock: every write, queued
// ones included, is answered 503 database_busy within about one statement timeout.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { toApiError } from '../src/core/errors.ts';
import { type CallResponse, startTestApp, type TestApp } from './support/app.ts';
import { cacheEvent } from './support/community.ts';
import { engines } from './support/databases.ts';
import { story } from './support/highlight-story.ts';

const TMPFS_BYTES = 8 * 1024 * 1024;

/** A tmpfs of TMPFS_BYTES at a new directory, or why there can be none (mounting needs root). */
function smallFilesystem(): { dir: string; unmount(): void } | string {
  if (process.getuid?.() !== 0) return 'mounting a small tmpfs needs root';
  const dir = mkdtempSync(join(tmpdir(), 'storage-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_BYTES}`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    return `mount -t tmpfs failed: ${(error as Error).message}`;
  }
  return {
    dir,
    unmount() {
      execFileSync('umount', [dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The app's log lines, parsed, as the logger writes them. */
function logCapture() {
  const lines: { msg?: string; level?: number; [key: string]: unknown }[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, stream };
}

const mounted = smallFilesystem();
after(() => {
  if (typeof mounted !== 'string') mounted.unmount();
});

test('SQLite on a full disk: 503 storage_unavailable, /readyz 503, two log lines, back with no restart', {
  skip: typeof mounted === 'string' ? mounted : false,
}, async (context) => {
  const { dir } = mounted as { dir: string };
  const log = logCapture();
  const t = await startTestApp({
    database: { url: `sqlite:${join(dir, 'agent.db')}`, drop: async () => {} },
    logStream: log.stream,
    limits: { feedbackPerHour: 1_000_000, anonymousPerMinute: 1_000_000 },
  });
  const filler = join(dir, 'filler');
  try {
    const write = (n: number) =>
      t.call('POST', '/api/agent/feedback', {
        body: { message: `full disk ${n} ${'x'.repeat(1900)}`, kind: 'other' },
      });
    const acknowledged = new Set<string>();
    const note = (answer: CallResponse) => {
      if (answer.status === 201 || answer.status === 200) acknowledged.add(answer.body.ticket_id);
    };
    for (let n = 0; n < 5; n++) note(await write(n));
    assert.equal(acknowledged.size, 5);
    // Everything the tmpfs has left goes to another file: the next pages SQLite needs find no room.
    try {
      writeFileSync(filler, Buffer.alloc(TMPFS_BYTES));
    } catch (error) {
      assert.equal((error as NodeJS.ErrnoException).code, 'ENOSPC');
    }
    const answers: CallResponse[] = [];
    for (let n = 0; n < 300; n++) {
      const answer = await write(1000 + n);
      note(answer);
      answers.push(answer);
    }
    const refused = answers.filter((answer) => answer.status === 503);
    context.diagnostic(`${refused.length} of ${answers.length} writes on the full disk answered 503`);
    assert.ok(refused.length > 250, `refused ${refused.length} of ${answers.length}`);
    assert.deepEqual(
      answers.filter((answer) => answer.status >= 500 && answer.status !== 503).map((answer) => answer.text),
      [],
    );
    for (const answer of refused) {
      assert.equal(answer.body.error, 'storage_unavailable', answer.text);
      assert.equal(answer.body.error_kind, 'unavailable');
      assert.match(answer.body.message, /cannot store writes/);
      assert.equal(answer.headers.get('retry-after'), '30');
      assert.equal(answer.body.retry_after_seconds, 30);
    }
    const notReady = await t.call('GET', '/readyz', { headers: { accept: 'text/plain' } });
    assert.equal(notReady.status, 503, notReady.text);
    assert.equal(notReady.headers.get('retry-after'), '30');
    assert.match(notReady.text, /database: down \(sqlite cannot write since .*SQLITE_FULL/);
    const json = await t.call('GET', '/readyz');
    assert.equal(json.status, 503);
    assert.equal(json.body.checks.database, 'down');

    rmSync(filler);
    // No write has come since: the probe of /readyz finds the room and clears the condition.
    const ready = await t.call('GET', '/readyz');
    assert.equal(ready.status, 200, ready.text);
    const again = await write(5000);
    assert.equal(again.status, 201, again.text);
    note(again);

    const stored = new Set(
      (await t.deps.db.selectFrom('feedback').select('ticket_id').execute()).map((row) => row.ticket_id),
    );
    for (const ticket of acknowledged) assert.ok(stored.has(ticket), `acknowledged ${ticket} is stored`);

    const warned = log.lines.filter((line) => (line.level ?? 0) >= 40);
    assert.deepEqual(
      warned.map((line) => line.msg),
      [
        'sqlite cannot write: answering writes 503 and /readyz 503 until a write succeeds',
        'sqlite writes again',
      ],
    );
    assert.equal(warned[0].code, 'SQLITE_FULL');
    assert.ok(
      log.lines.every((line) => line.err === undefined),
      'no stack trace logged',
    );
    context.diagnostic(`${log.lines.length} log lines in all, ${warned.length} at warn or above`);
  } finally {
    rmSync(filler, { force: true });
    await t.close();
  }
});

test('every code saying the storage cannot write is 503 storage_unavailable; a lock wait is 503 database_busy', () => {
  for (const code of [
    'SQLITE_FULL',
    'SQLITE_IOERR',
    'SQLITE_IOERR_WRITE',
    'SQLITE_READONLY',
    'SQLITE_READONLY_DBMOVED',
    'SQLITE_CANTOPEN',
    '53100',
    '53000',
    '53200',
    '25006',
    '58030',
  ]) {
    const mapped = toApiError(Object.assign(new Error('refused'), { code }));
    assert.equal(mapped.status, 503, code);
    assert.equal(mapped.code, 'storage_unavailable', code);
    assert.deepEqual(mapped.headers(), { 'retry-after': '30' });
  }
  for (const code of ['55P03', 'SQLITE_BUSY', 'SQLITE_BUSY_SNAPSHOT']) {
    const mapped = toApiError(Object.assign(new Error('busy'), { code }));
    assert.equal(mapped.status, 503, code);
    assert.equal(mapped.code, 'database_busy', code);
    assert.match(String(mapped.body().message), /waited .* for a lock held by another transaction/);
    assert.deepEqual(mapped.headers(), { 'retry-after': '2' });
  }
  // The outage codes stay what they were.
  assert.equal(
    toApiError(Object.assign(new Error('starting'), { code: '57P03' })).code,
    'service_unavailable',
  );
  assert.equal(toApiError(Object.assign(new Error('x'), { code: 'SQLITE_CONSTRAINT' })).status, 500);
});

const postgres = engines.find((engine) => engine.name === 'postgres')!;

describe('a lock held by another session (postgres)', { skip: postgres.skip }, () => {
  const TIMEOUT_MS = 2000;
  let t: TestApp;
  after(() => t?.close());

  test('writes, queued ones included, are answered 503 database_busy within one statement timeout', async (context) => {
    t = await startTestApp({
      engine: 'postgres',
      config: { databaseTimeouts: { connectTimeoutMs: 3000, statementTimeoutMs: TIMEOUT_MS } },
    });
    const member = await t.member('member');
    const token = await t.token(member, ['events:rsvp']);
    const author = await t.token(await t.member('core'), ['events:submit_recap']);
    const submit = (id: string) =>
      t.call('POST', '/api/ingest/highlights/pending', { token: author, body: story(id) });
    const urls = await Promise.all([0, 1, 2, 3, 4, 5, 6].map((i) => cacheEvent(t, `held-lock-${i}`)));
    const rsvp = (url: string) => t.call('POST', '/api/events/rsvp', { token, body: { event_url: url } });
    const admin = new pg.Client({ connectionString: t.database.url });
    await admin.connect();
    try {
      await admin.query('begin');
      await admin.query('lock table rsvps, highlights in access exclusive mode');
      // One member's RSVPs: the first two run at once, the rest queue in its lane behind them and go
      // as one batch when one ends. Highlight submissions share one transaction at a time: the first
      // goes at once, the rest queue behind it.
      const timed = await Promise.all([
        ...urls.slice(0, 6).map((url, i) => later(i * 150, () => rsvp(url))),
        ...[0, 1, 2, 3].map((i) => later(i * 200, () => submit(`held-lock-story-${i}`))),
      ]);
      context.diagnostic(
        `answered in ${timed.map(({ ms }) => ms).join(', ')} ms (statement timeout ${TIMEOUT_MS})`,
      );
      for (const { answer, ms } of timed) {
        assert.equal(answer.status, 503, answer.text);
        assert.equal(answer.body.error, 'database_busy');
        assert.equal(answer.body.error_kind, 'unavailable');
        assert.equal(
          answer.body.message,
          'A write waited longer than 1800 ms for a lock held by another transaction and was rolled back; retry shortly.',
        );
        assert.equal(answer.headers.get('retry-after'), '2');
        assert.ok(ms < TIMEOUT_MS * 1.3, `answered in ${ms} ms`);
      }
    } finally {
      await admin.query('rollback');
      await admin.end();
    }
    const served = await rsvp(urls[6]);
    assert.equal(served.status, 202, served.text);
    const submitted = await submit('after-the-lock');
    assert.equal(submitted.status, 202, submitted.text);
  });
});

/** The answer to `call` started `ms` from now, and how long it took from its start. */
async function later(ms: number, call: () => Promise<CallResponse>) {
  await new Promise((resolve) => setTimeout(resolve, ms));
  const began = Date.now();
  const answer = await call();
  return { answer, ms: Date.now() - began };
}
