// `corpus add` and `corpus queue` read what an operator types: anything that is not a readable
// http(s) URL or path ends the command with one line and exit 1, never a stack trace. Refused before
// any SQL runs (or, for fetch failures, the same on both engines), so SQLite alone is enough.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { freshDatabase, type TestDatabase } from './support/databases.ts';
import { killAllChildren, runCli } from './support/processes.ts';
import { tempDir, writeFile } from './support/research-corpus.ts';

function assertOneLineRefusal(result: { code: number | null; stderr: string }, pattern: RegExp) {
  assert.equal(result.code, 1, result.stderr);
  assert.match(result.stderr, pattern);
  assert.doesNotMatch(result.stderr, /\n\s+at |node:internal|Error:/, 'no stack trace');
}

describe('corpus commands refuse what they cannot read in one line', () => {
  let database: TestDatabase;
  const dir = tempDir();
  before(async () => {
    database = await freshDatabase('sqlite');
    assert.equal((await runCli(database.url, ['migrate'])).code, 0);
  });
  after(async () => {
    await killAllChildren();
    await database?.drop();
  });

  const documents = async () => {
    const listed = await runCli(database.url, ['corpus', 'list', '--json']);
    return JSON.parse(listed.stdout) as unknown[];
  };

  test('other schemes, malformed URLs and missing paths; nothing is ingested alongside them', async () => {
    const good = writeFile(dir, 'good.txt', 'Kelp\n\nGiant kelp grows fast.\n');
    const cases: [string, RegExp][] = [
      ['file:///etc/passwd', /^error: file:\/\/\/etc\/passwd: only http and https URLs are read/],
      ['gopher://example.org/1', /^error: gopher:\/\/example\.org\/1: only http and https URLs/],
      ['ftp://example.org/paper.pdf', /only http and https URLs are read/],
      ['javascript:alert(1)', /only http and https URLs are read/],
      ['data:text/plain,hello', /only http and https URLs are read/],
      ['http://', /^error: http:\/\/: not a valid URL\n$/],
      ['https://exa mple.org/', /not a valid URL/],
      ['http://[::1', /not a valid URL/],
      ['http:/example.org', /not a valid URL/],
      [`${dir}/missing.txt`, /missing\.txt: no such file or directory\n$/],
    ];
    const runs = await Promise.all(
      cases.map(([target]) => runCli(database.url, ['corpus', 'add', good, target, '--source', 'paper'])),
    );
    runs.forEach((run, i) => {
      assertOneLineRefusal(run, cases[i][1]);
      assert.equal(run.stdout, '', cases[i][0]);
    });
    const badUrl = await runCli(database.url, [
      'corpus',
      'add',
      good,
      '--source',
      'paper',
      '--url',
      'javascript:alert(1)',
    ]);
    assertOneLineRefusal(badUrl, /--url must be an http or https URL/);
    assert.deepEqual(await documents(), [], 'a refused command ingests nothing');
  });

  test('a URL that fails to fetch is reported with its reason, one line', async () => {
    const run = await runCli(database.url, [
      'corpus',
      'add',
      'http://127.0.0.1:9/doc.html',
      '--source',
      'book',
    ]);
    assertOneLineRefusal(
      run,
      /^error: http:\/\/127\.0\.0\.1:9\/doc\.html: .*loopback, private or link-local/m,
    );
    assert.match(run.stdout, /failed/);
  });

  test('queue add refuses the same targets; approving a URL that cannot be fetched is one line', async () => {
    const [gopher, malformed] = await Promise.all([
      runCli(database.url, ['corpus', 'queue', 'add', 'gopher://example.org/', '--source', 'paper']),
      runCli(database.url, ['corpus', 'queue', 'add', 'https://', '--source', 'paper']),
    ]);
    assertOneLineRefusal(gopher, /only http and https URLs are read/);
    assertOneLineRefusal(malformed, /not a valid URL/);

    const queued = await runCli(database.url, [
      'corpus',
      'queue',
      'add',
      'http://127.0.0.1:9/doc.html',
      '--source',
      'paper',
    ]);
    assert.equal(queued.code, 0, queued.stderr);
    const id = /queued (cq_\w+)/.exec(queued.stdout)![1];
    const approved = await runCli(database.url, ['corpus', 'queue', 'approve', id]);
    assertOneLineRefusal(approved, new RegExp(`^error: ${id} not ingested: .*loopback`));
    const pending = await runCli(database.url, ['corpus', 'queue', 'list', '--json']);
    assert.deepEqual(
      (JSON.parse(pending.stdout) as { id: string }[]).map((item) => item.id),
      [id],
      'still pending',
    );
  });
});
