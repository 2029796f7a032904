import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { reindex, removeDocument } from '../src/domain/research/corpus.ts';
import { PassageIndex } from '../src/domain/research/passage-index.ts';
import { retrieve, snippetOf } from '../src/domain/research/search.ts';
import { termOf } from '../src/domain/research/tokenizer.ts';
import { SQLITE_PASSAGES_TABLE } from '../src/storage/corpus-passages.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { engines } from './helpers/databases.ts';
import { add, tempDir, writeFile } from './support/research-corpus.ts';

interface Passage {
  source: 'paper' | 'book';
  title: string;
  section: string;
  body: string;
}

describe('research index', () => {
  const dir = mkdtempSync(join(tmpdir(), 'research-index-'));
  const db = new SQLite(join(dir, 'corpus.db'));
  const passages: Passage[] = [
    {
      source: 'paper',
      title: 'Lenses',
      section: 'Grinding',
      body: 'A lens is ground from glass. Lenses focus light.',
    },
    {
      source: 'paper',
      title: 'Telescopes',
      section: 'Mirrors',
      body: 'A mirror gathers light; no lens is needed.',
    },
    {
      source: 'book',
      title: 'Optics',
      section: 'Lens makers',
      body: 'The lens maker grinds each lens by hand.',
    },
    { source: 'paper', title: 'Cafés', section: 'Indexes', body: 'The café keeps an index of its regulars.' },
    {
      source: 'paper',
      title: 'Filler',
      section: 'Nothing',
      body: 'Unrelated words about gardening and soil.',
    },
  ];
  let index: PassageIndex;

  before(async () => {
    db.exec(SQLITE_PASSAGES_TABLE);
    db.exec(
      'create table corpus_documents (id text primary key, source text not null, title text not null, authors text not null, year integer, url text)',
    );
    const addDocument = db.prepare(
      "insert into corpus_documents (id, source, title, authors, year, url) values (?, ?, ?, 'A. Author', 2001, null)",
    );
    const addPassage = db.prepare(
      'insert into corpus_passages (document_id, position, source, title, section, body) values (?, 0, ?, ?, ?, ?)',
    );
    passages.forEach((p, i) => {
      addDocument.run(`doc_${i}`, p.source, p.title);
      addPassage.run(`doc_${i}`, p.source, p.title, p.section, p.body);
    });
    index = await PassageIndex.build(db);
  });
  after(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** BM25 as documented (k1 1.2, b 0.75, section words counted twice), computed from the words. */
  function expectedScore(passage: Passage, term: string, allPassages: Passage[]): number | undefined {
    const terms = (text: string) => (text.match(/[\p{L}\p{N}]+/gu) ?? []).map(termOf);
    const lengthOf = (p: Passage) => terms(p.title).length + terms(p.section).length + terms(p.body).length;
    const frequency =
      terms(passage.title).filter((t) => t === term).length +
      2 * terms(passage.section).filter((t) => t === term).length +
      terms(passage.body).filter((t) => t === term).length;
    const containing = allPassages.filter((p) =>
      [...terms(p.title), ...terms(p.section), ...terms(p.body)].includes(term),
    ).length;
    if (frequency === 0) return undefined;
    const n = allPassages.length;
    const idf = Math.max(Math.log((n - containing + 0.5) / (containing + 0.5)), 1e-6);
    const average = allPassages.reduce((sum, p) => sum + lengthOf(p), 0) / n;
    const norm = 1.2 * (1 - 0.75 + (0.75 * lengthOf(passage)) / average);
    return (idf * frequency * 2.2) / (frequency + norm);
  }

  test('scores are BM25 over title, section (counted twice) and body; best first; sources filter', () => {
    const lens = termOf('lens');
    const hits = index.search([lens], 10, ['paper', 'book']);
    const expected = passages.map((p) => expectedScore(p, lens, passages));
    assert.deepEqual(
      hits.map((h) => h.passageId).sort(),
      expected.flatMap((score, i) => (score === undefined ? [] : [i + 1])),
      'every passage with the word, and no other',
    );
    assert.equal(hits.length, 3);
    for (const hit of hits) {
      const want = expected[hit.passageId - 1] ?? Number.NaN;
      assert.ok(Math.abs(hit.score - want) < 1e-9, `passage ${hit.passageId}: ${hit.score} vs ${want}`);
    }
    assert.ok(hits[0].score >= hits[1].score && hits[1].score >= hits[2].score);
    assert.equal(hits[0].passageId, 3, 'the book passage with the word in its section heading ranks first');
    assert.deepEqual(
      index.search([lens], 10, ['paper']).map((h) => h.passageId),
      hits.filter((h) => h.passageId !== 3).map((h) => h.passageId),
    );
    assert.deepEqual(index.search([lens], 1, ['paper', 'book']), [hits[0]]);
    assert.deepEqual(index.search([termOf('nowhere')], 10, ['paper', 'book']), []);
    assert.deepEqual(index.search([lens], 10, []), []);
  });

  test('a query word meets its inflections and its accented spelling', () => {
    const found = retrieve(index, db, 'Indexing cafe', 10, ['paper']);
    assert.equal(found.length, 1);
    assert.equal(found[0].result.id, 'doc_3#0');
    assert.equal(
      found[0].result.snippet,
      'The <mark>café</mark> keeps an <mark>index</mark> of its regulars.',
    );
    assert.equal(found[0].result.authors, 'A. Author');
    assert.equal(found[0].result.year, 2001);
  });

  test('equal scores keep the order the passages were stored in', async () => {
    const twins = new SQLite(join(dir, 'twins.db'));
    twins.exec(SQLITE_PASSAGES_TABLE);
    const add = twins.prepare(
      "insert into corpus_passages (document_id, position, source, title, section, body) values (?, 0, 'paper', 'Same', 'Same', 'identical words here')",
    );
    for (const id of ['c', 'a', 'b']) add.run(id);
    const ranked = (await PassageIndex.build(twins)).search([termOf('identical')], 3, ['paper']);
    twins.close();
    assert.deepEqual(
      ranked.map((h) => h.passageId),
      [1, 2, 3],
    );
    assert.equal(new Set(ranked.map((h) => h.score)).size, 1);
  });

  test('a snippet is the 32-word stretch with the most distinct query words, cut with …', () => {
    const filler = (n: number, word: string) => Array.from({ length: n }, () => word).join(' ');
    const body = `${filler(40, 'alpha')} lens ${filler(10, 'beta')} mirror ${filler(40, 'gamma')}`;
    const snippet = snippetOf(body, new Set([termOf('lens'), termOf('mirror')]));
    assert.equal(
      snippet,
      `…alpha alpha alpha <mark>lens</mark> ${filler(10, 'beta')} <mark>mirror</mark> ${filler(17, 'gamma')}…`,
    );
    const short = 'Short text, no match.';
    assert.equal(snippetOf(short, new Set([termOf('lens')])), short);
  });
});

for (const engine of engines) {
  describe(`research index across instances (${engine.name})`, { skip: engine.skip }, () => {
    let first: TestApp;
    let second: TestApp;
    let token: string;
    const dir = tempDir();
    before(async () => {
      first = await startTestApp({ engine: engine.name });
      second = await startTestApp({ database: first.database });
      token = await first.token(await first.member('resident'), ['research:query']);
    });
    after(async () => {
      await second?.close();
      await first?.close();
    });
    const ask = (app: TestApp, q: string) =>
      app.call('POST', '/api/research/ask', { token, body: { q, sources: ['paper'] } });
    const titles = (response: { body: { results: { title: string }[] } }) =>
      response.body.results.map((r) => r.title);

    test('a document added, changed or removed through one instance is answered by the other at its next search', async () => {
      assert.deepEqual(titles(await ask(second, 'kelp')), []);
      const file = writeFile(dir, 'kelp.md', '# Kelp forests\n\nGiant kelp grows half a metre a day.\n');
      await add(first.deps, file, { source: 'paper' });
      assert.deepEqual(titles(await ask(second, 'kelp')), ['Kelp forests']);
      assert.deepEqual(titles(await ask(first, 'kelp')), ['Kelp forests']);

      writeFile(dir, 'kelp.md', '# Kelp forests\n\nSea otters keep the urchins in check.\n');
      await add(first.deps, file, { source: 'paper' });
      assert.deepEqual(titles(await ask(second, 'kelp')), ['Kelp forests'], 'the title still matches');
      assert.deepEqual(titles(await ask(second, 'metre')), [], 'the old text is gone');
      const otters = await ask(second, 'otters');
      assert.match(otters.body.results[0].snippet, /<mark>otters<\/mark>/);

      // A reindex leaves the answers as they were, rebuilt from the stored passages.
      assert.equal(await reindex(first.deps), 1);
      assert.deepEqual(titles(await ask(second, 'otters')), ['Kelp forests']);

      assert.equal(await removeDocument(first.deps, file), true);
      assert.deepEqual(titles(await ask(second, 'otters')), []);
      assert.deepEqual(titles(await ask(first, 'otters')), []);
      const stored = await second.deps.db.selectFrom('corpus_passages').select('id').execute();
      assert.deepEqual(stored, []);
    });
  });
}
