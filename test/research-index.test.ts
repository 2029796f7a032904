import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { reindex, removeDocument } from '../src/domain/research/corpus.ts';
import { openCorpusIndex } from '../src/domain/research/corpus-index.ts';
import { PassageIndex } from '../src/domain/research/passage-index.ts';
import { retrieve, snippetOf } from '../src/domain/research/search.ts';
import { termOf } from '../src/domain/research/tokenizer.ts';
import { SQLITE_PASSAGES_TABLE } from '../src/storage/corpus-passages.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';
import { add, tempDir, writeFile } from './support/research-corpus.ts';

interface Passage {
  source: 'paper' | 'book';
  title: string;
  section: string;
  body: string;
}

/**
 * BM25 as documented (k1 1.2, b 0.75, FTS5's IDF, a section word counted twice), computed directly
 * from the words: the oracle the index is checked against. 0 when no term matches.
 */
function bm25Oracle(corpus: Passage[]): (i: number, terms: string[]) => number {
  const words = (text: string) => (text.match(/[\p{L}\p{N}]+/gu) ?? []).map(termOf);
  const passages = corpus.map((p) => {
    const weighted = new Map<string, number>();
    for (const [field, weight] of [
      [p.title, 1],
      [p.section, 2],
      [p.body, 1],
    ] as const)
      for (const t of words(field)) weighted.set(t, (weighted.get(t) ?? 0) + weight);
    return { weighted, length: words(p.title).length + words(p.section).length + words(p.body).length };
  });
  const average = passages.reduce((sum, p) => sum + p.length, 0) / corpus.length;
  return (i, terms) =>
    terms.reduce((sum, term) => {
      const frequency = passages[i].weighted.get(term) ?? 0;
      if (frequency === 0) return sum;
      const containing = passages.filter((p) => p.weighted.has(term)).length;
      const idf = Math.max(Math.log((corpus.length - containing + 0.5) / (containing + 0.5)), 1e-6);
      const norm = 1.2 * (1 - 0.75 + (0.75 * passages[i].length) / average);
      return sum + (idf * frequency * 2.2) / (frequency + norm);
    }, 0);
}

describe('research index', () => {
  const dir = tempDir();
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

  test('scores are BM25 over title, section (counted twice) and body; best first; sources filter', () => {
    const lens = termOf('lens');
    const hits = index.search([lens], 10, ['paper', 'book']);
    const score = bm25Oracle(passages);
    const expected = passages.map((_, i) => score(i, [lens]) || undefined);
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

  test('on a larger random corpus the top k and its scores match BM25 computed directly, for any k and sources', async () => {
    // A seeded generator, Zipf-like word frequencies: a few words everywhere, most of them rare, so
    // the pruning of common words is exercised.
    let seed = 42;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    const vocabulary = Array.from({ length: 80 }, (_, i) => `w${i.toString(36)}x`);
    const word = () => vocabulary[Math.min(79, Math.floor(80 * random() ** 2.5))];
    const words = (min: number, max: number) =>
      Array.from({ length: min + Math.floor(random() * (max - min + 1)) }, word).join(' ');
    const corpus: Passage[] = Array.from({ length: 600 }, (_, i) => ({
      source: i % 3 === 0 ? 'book' : 'paper',
      title: words(1, 4),
      section: words(1, 3),
      body: words(5, 60),
    }));
    const file = new SQLite(join(dir, 'random.db'));
    file.exec(SQLITE_PASSAGES_TABLE);
    const add = file.prepare(
      "insert into corpus_passages (document_id, position, source, title, section, body) values ('d', ?, ?, ?, ?, ?)",
    );
    for (const [i, p] of corpus.entries()) add.run(i, p.source, p.title, p.section, p.body);
    const randomIndex = await PassageIndex.build(file);
    file.close();

    const bm25 = bm25Oracle(corpus);
    const sourceOf = (passageId: number) => corpus[passageId - 1].source;

    let compared = 0;
    for (let q = 0; q < 60; q++) {
      const terms = [...new Set(Array.from({ length: 1 + Math.floor(random() * 5) }, word).map(termOf))];
      const k = [1, 3, 10, 50][q % 4];
      const sources: ('paper' | 'book')[] = q % 5 === 0 ? ['book'] : ['paper', 'book'];
      const exact = corpus
        .map((_, i) => ({ passageId: i + 1, score: bm25(i, terms) }))
        .filter((h) => h.score > 0 && sources.includes(sourceOf(h.passageId)))
        .sort((a, b) => b.score - a.score || a.passageId - b.passageId)
        .slice(0, k);
      const found = randomIndex.search(terms, k, sources);
      assert.equal(found.length, exact.length, `query ${terms.join(' ')}`);
      found.forEach((hit, rank) => {
        // Impacts are 16-bit and sums single precision: scores agree to a few parts in 10 000, and
        // only passages that close may trade places.
        const tolerance = 1e-3 * Math.max(1, exact[rank].score);
        assert.ok(Math.abs(hit.score - exact[rank].score) < tolerance, `rank ${rank} of ${terms.join(' ')}`);
        assert.ok(Math.abs(hit.score - bm25(hit.passageId - 1, terms)) < tolerance);
        compared++;
      });
    }
    assert.ok(compared > 300, `${compared} ranks compared`);
  });

  test('passages past the 65 536th are found and scored as the first ones (24-bit positions)', async () => {
    const file = new SQLite(join(dir, 'wide.db'));
    file.exec(SQLITE_PASSAGES_TABLE);
    const add = file.prepare(
      "insert into corpus_passages (document_id, position, source, title, section, body) values ('d', ?, 'paper', 'T', 'S', ?)",
    );
    // Positions on both sides of 2^16 and near the end; every other passage holds only the filler.
    const rare = new Set([100, 65_535, 65_536, 65_537, 69_999]);
    file.transaction(() => {
      for (let i = 0; i < 70_000; i++) add.run(i, rare.has(i) ? 'quokka filler' : 'filler words');
    })();
    const wide = await PassageIndex.build(file);
    file.close();
    assert.equal(wide.size, 70_000);
    const expectedIds = [...rare].map((position) => position + 1);
    const alone = wide.search([termOf('quokka')], 10, ['paper']);
    assert.deepEqual(
      alone.map((hit) => hit.passageId),
      expectedIds,
    );
    // The filler is in every passage: it is looked up by galloping for the five still in reach.
    const both = wide.search([termOf('quokka'), termOf('filler')], 5, ['paper']);
    assert.deepEqual(
      both.map((hit) => hit.passageId),
      expectedIds,
    );
    for (const hit of both) {
      assert.equal(hit.score, both[0].score, 'the same words score the same at any position');
      assert.ok(hit.score > alone[0].score, 'the filler was found for every one of them');
    }
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

    test('past the wait threshold a search answers from the previous index while the new one is built', async () => {
      // Threshold below any build time: as for a large corpus, searches never wait for a rebuild.
      const corpus = openCorpusIndex(first.deps.database, { waitForRebuildMs: -1 });
      const file = writeFile(dir, 'heron.md', '# Herons\n\nA heron stands still in shallow water.\n');
      await add(first.deps, file, { source: 'paper' });
      const results = async (q: string) => {
        const { index, db } = await corpus.searcher();
        return retrieve(index, db, q, 10, ['paper']).map((p) => p.result);
      };
      const search = async (q: string) => (await results(q)).map((r) => r.title);
      try {
        assert.deepEqual(await search('heron'), ['Herons'], 'the first build is always waited for');
        writeFile(dir, 'heron.md', '# Egrets\n\nAn egret wades after fish.\n');
        await add(first.deps, file, { source: 'paper' });
        // The change started a rebuild; this search did not wait for it. It answers from the previous
        // index: the old passage where this instance still has it (the local copy on PostgreSQL), or
        // nothing where it is gone (SQLite), never the new passage under the old words.
        const stale = await results('heron');
        assert.ok(stale.length <= 1, JSON.stringify(stale));
        for (const result of stale) {
          assert.equal(result.title, 'Herons');
          assert.match(result.snippet, /<mark>heron<\/mark>/);
        }
        let fresh: string[] = [];
        for (let tries = 0; fresh.length === 0 && tries < 100; tries++) {
          await new Promise((resolve) => setTimeout(resolve, 10));
          fresh = await search('egret');
        }
        assert.deepEqual(fresh, ['Egrets'], 'the rebuilt index answers once it is ready');
      } finally {
        corpus.close();
        await removeDocument(first.deps, file);
      }
    });

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
