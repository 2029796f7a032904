import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../src/config.ts';
import { openCorpusIndex } from '../src/domain/research/corpus-index.ts';
import { retrieve } from '../src/domain/research/search.ts';
import { makeTemporaryCopyDir, removeAbandonedCopies } from '../src/domain/research/temporary-copy.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines, freshDatabase } from './support/databases.ts';
import { killAllChildren, runCli, type ServerProcess, startServer } from './support/processes.ts';
import { add, SMALL_CORPUS, tempDir, writeFile } from './support/research-corpus.ts';

for (const engine of engines) {
  describe(`research index kept between starts (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    const files = tempDir();
    const indexDir = tempDir();
    const indexFile = join(indexDir, 'research-index');
    before(async () => {
      // RESEARCH_INDEX_DIR, as a deployment sets it.
      const research = loadConfig({ RESEARCH_INDEX_DIR: indexDir }).research;
      t = await startTestApp({ engine: engine.name, config: { research } });
      for (const doc of SMALL_CORPUS)
        await add(t.deps, writeFile(files, doc.name, doc.text), { source: doc.source });
    });
    after(async () => t?.close());

    /** A fresh instance's index (as at a restart): what it answers and where its index came from. */
    async function freshInstance(question = 'lighthouse lens') {
      const corpus = openCorpusIndex(t.deps.database, { dir: indexDir });
      try {
        const { index, db } = await corpus.searcher();
        const answer = retrieve(index, db, question, 10, ['paper', 'book']).map((p) => ({
          id: p.result.id,
          score: p.result.score,
        }));
        return { answer, from: corpus.state()?.from };
      } finally {
        corpus.close();
      }
    }

    test('the first start builds and stores the index; the next reads it back and answers alike', async () => {
      const built = await freshInstance();
      assert.equal(built.from, 'passages');
      assert.ok(built.answer.length > 0);
      assert.ok(statSync(indexFile).size > 0, 'the index file was written');
      const read = await freshInstance();
      assert.equal(read.from, 'file');
      assert.deepEqual(read.answer, built.answer);
      // The server's own instance answers the same over the wire.
      const token = await t.token(await t.member('resident'), ['research:query']);
      const wire = await t.call('POST', '/api/research/ask', {
        token,
        body: { q: 'lighthouse lens', sources: ['paper', 'book'] },
      });
      assert.equal(wire.status, 200);
      assert.deepEqual(
        wire.body.results.map((r: { id: string; score: number }) => ({ id: r.id, score: r.score })),
        built.answer,
      );
    });

    test('a corpus change makes the stored index stale: the next start rebuilds and sees it', async () => {
      await freshInstance();
      const doc = writeFile(files, 'herons.md', '# Herons\n\nA heron stands still in shallow water.\n');
      await add(t.deps, doc, { source: 'paper' });
      const after = await freshInstance('heron');
      assert.equal(after.from, 'passages');
      assert.equal(after.answer.length, 1);
      assert.equal((await freshInstance('heron')).from, 'file', 'and stores the new one');
    });

    test('a passage written behind the service’s back (no generation bump) is not missed', async () => {
      await freshInstance();
      const stored = await t.deps.db
        .selectFrom('corpus_passages')
        .selectAll()
        .orderBy('id', 'desc')
        .executeTakeFirstOrThrow();
      await t.deps.db
        .insertInto('corpus_passages')
        .values({
          document_id: stored.document_id,
          position: Number(stored.position) + 1000,
          source: stored.source,
          title: 'Narwhals',
          section: 'Tusks',
          body: 'The narwhal tusk is a tooth.',
        } as never)
        .execute();
      if (engine.name === 'postgres') {
        // The PostgreSQL copy is kept by document revision: a hand edit needs the documented reindex.
        await t.deps.db
          .updateTable('corpus_documents')
          .set({ revision: 999 } as never)
          .execute();
      }
      const after = await freshInstance('narwhal');
      assert.equal(after.from, 'passages');
      assert.equal(after.answer.length, 1);
      await t.deps.db.deleteFrom('corpus_passages').where('title', '=', 'Narwhals').execute();
    });

    test('a damaged or truncated file is rebuilt from the passages, never trusted', async () => {
      const good = await freshInstance();
      assert.equal((await freshInstance()).from, 'file');
      const bytes = readFileSync(indexFile);
      bytes[bytes.length - 3] ^= 0xff;
      writeFileSync(indexFile, bytes);
      const damaged = await freshInstance();
      assert.equal(damaged.from, 'passages');
      assert.deepEqual(damaged.answer, good.answer);
      writeFileSync(indexFile, bytes.subarray(0, Math.floor(bytes.length / 2)));
      const truncated = await freshInstance();
      assert.equal(truncated.from, 'passages');
      assert.deepEqual(truncated.answer, good.answer);
      writeFileSync(indexFile, 'not an index');
      assert.equal((await freshInstance()).from, 'passages');
      assert.equal((await freshInstance()).from, 'file', 'each rebuild stores a good file again');
    });
  });
}

describe('research index file beside the embedded database', () => {
  test('with no directory set, the index is kept as <database file>.research-index', async () => {
    const t = await startTestApp({ engine: 'sqlite' });
    try {
      const files = tempDir();
      await add(t.deps, writeFile(files, 'kelp.md', '# Kelp\n\nGiant kelp grows fast.\n'), {
        source: 'paper',
      });
      const token = await t.token(await t.member('resident'), ['research:query']);
      const asked = await t.call('POST', '/api/research/ask', { token, body: { q: 'kelp' } });
      assert.equal(asked.status, 200);
      assert.equal(asked.body.results[0].title, 'Kelp');
      const location = t.deps.database.location;
      assert.ok(existsSync(`${location}.research-index`));
      assert.equal(t.deps.corpus.state()?.from, 'passages');
      await t.restart();
      const again = await t.call('POST', '/api/research/ask', { token, body: { q: 'kelp' } });
      assert.deepEqual(again.body.results, asked.body.results);
      assert.equal(t.deps.corpus.state()?.from, 'file');
    } finally {
      await t.close();
    }
  });
});

const postgres = engines.find((engine) => engine.name === 'postgres')!;

describe('research copy without RESEARCH_INDEX_DIR (postgres)', { skip: postgres.skip }, () => {
  test('made at the first build in the temporary directory, with no index file, and removed at close', async () => {
    const t = await startTestApp({ engine: 'postgres' });
    const files = tempDir();
    await add(t.deps, writeFile(files, 'kelp.md', '# Kelp\n\nGiant kelp grows fast.\n'), { source: 'paper' });
    const temporary = tempDir();
    const previous = process.env.TMPDIR;
    // os.tmpdir() reads TMPDIR at each call: this instance's copy goes where nothing else writes.
    process.env.TMPDIR = temporary;
    try {
      const corpus = openCorpusIndex(t.deps.database);
      assert.deepEqual(readdirSync(temporary), [], 'nothing before the first build');
      const { index, db } = await corpus.searcher();
      const answer = retrieve(index, db, 'kelp', 10, ['paper']);
      assert.equal(answer.length, 1);
      const [copy] = readdirSync(temporary);
      assert.match(copy, new RegExp(`^agent-commons-corpus-.+-${process.pid}-[A-Za-z0-9]{6}$`));
      assert.deepEqual(
        readdirSync(join(temporary, copy)).filter((name) => !name.startsWith('corpus.db')),
        [],
        'the copy only: no index file, the next start rebuilds anyway',
      );
      corpus.close();
      assert.deepEqual(readdirSync(temporary), []);
    } finally {
      if (previous === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = previous;
      await t.close();
    }
  });
});

describe('temporary research copies a dead process left behind', () => {
  test("the next copy removes those of this host's dead processes, and no other", async () => {
    const temporary = tempDir();
    const host = hostname().replace(/[^A-Za-z0-9.-]/g, '_');
    // A process that has exited: its pid names no running process (kill -9 leaves the same).
    const dead = spawnSync(process.execPath, ['-e', '']).pid as number;
    const left = (name: string) => {
      mkdirSync(join(temporary, name));
      writeFileSync(join(temporary, name, 'corpus.db'), 'passages');
      return name;
    };
    const abandoned = left(`agent-commons-corpus-${host}-${dead}-a1B2c3`);
    const running = left(`agent-commons-corpus-${host}-${process.ppid}-d4E5f6`);
    const otherHost = left(`agent-commons-corpus-${host}x-${dead}-g7H8i9`);
    const olderName = left('agent-commons-corpus-j0K1l2');
    const unrelated = left(`something-else-${dead}-m3N4o5`);
    const previous = process.env.TMPDIR;
    process.env.TMPDIR = temporary;
    let made: string;
    try {
      made = makeTemporaryCopyDir();
    } finally {
      if (previous === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = previous;
    }
    assert.equal(existsSync(join(temporary, abandoned)), false, "the dead process's copy is gone");
    assert.deepEqual(
      readdirSync(temporary).sort(),
      [running, otherHost, olderName, unrelated, basename(made)].sort(),
    );
    assert.equal(readFileSync(join(temporary, running, 'corpus.db'), 'utf8'), 'passages');
    assert.match(basename(made), new RegExp(`^agent-commons-corpus-${host}-${process.pid}-`));
    // A second copy of this (running) process leaves the first alone.
    assert.deepEqual(removeAbandonedCopies(temporary), []);
  });
});

describe('a server killed with -9 (postgres)', { skip: postgres.skip }, () => {
  after(killAllChildren);
  test('leaves its temporary research copy behind; the next server on the host removes it', async () => {
    const database = await freshDatabase('postgres');
    const temporary = tempDir();
    const copies = () => readdirSync(temporary).filter((name) => name.startsWith('agent-commons-corpus-'));
    /**
     * The one copy a server made (its start-up build makes it), once its database file is there: the
     * directory is made first and the file in it after, so a slow machine can be seen between the two.
     */
    const copyOf = async (server: ServerProcess) => {
      const deadline = Date.now() + 20_000;
      for (;;) {
        const mine = copies().filter((name) => name.includes(`-${server.child.pid}-`));
        if (mine.length === 1 && existsSync(join(temporary, mine[0], 'corpus.db'))) return mine[0];
        assert.ok(Date.now() < deadline, `no copy of ${server.child.pid} in ${copies()}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    try {
      const first = await startServer(database.url, { args: ['--no-seed'], env: { TMPDIR: temporary } });
      const abandoned = await copyOf(first);
      await first.kill('SIGKILL');
      assert.deepEqual(copies(), [abandoned], 'kill -9 ran no cleanup');
      const second = await startServer(database.url, { args: ['--no-seed'], env: { TMPDIR: temporary } });
      const made = await copyOf(second);
      assert.deepEqual(copies(), [made]);
      await second.kill('SIGTERM');
      assert.deepEqual(copies(), [], 'a server that closes removes its own');
    } finally {
      await database.drop();
    }
  });
});

test('a RESEARCH_INDEX_DIR the process cannot write to stops `serve` with a sentence naming it', async () => {
  const database = await freshDatabase('sqlite');
  try {
    // Under a regular file: no user, root included, can make a directory there.
    const blocker = join(tempDir(), 'a-file');
    writeFileSync(blocker, 'not a directory');
    const dir = join(blocker, 'index');
    const run = await runCli(database.url, ['serve', '--no-seed'], {
      env: { PORT: '0', RESEARCH_INDEX_DIR: dir },
      timeoutMs: 30_000,
    });
    assert.equal(run.code, 1, run.stderr);
    assert.match(
      run.stderr,
      new RegExp(
        `cannot start: RESEARCH_INDEX_DIR ${dir} is not a directory this process can write to \\(ENOTDIR\\)`,
      ),
    );
    assert.doesNotMatch(run.stderr, /at .*\.ts:\d+/, 'a sentence, not a stack trace');
    assert.equal(run.stdout.includes('listening'), false);
  } finally {
    await database.drop();
  }
});
