import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { documentId, ingest, removeDocument } from '../src/domain/research/corpus.ts';
import { fetchSource } from '../src/domain/research/read-source.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';
import { add, tempDir, tinyPdf, writeFile } from './support/research-corpus.ts';

const ASK = '/api/research/ask';

for (const engine of engines) {
  describe(`research corpus ingestion (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    let token: string;
    const dir = tempDir();
    before(async () => {
      t = await startTestApp({ engine: engine.name });
      token = await t.token(await t.member('resident'), ['research:query']);
    });
    after(() => t?.close());

    const ask = (q: string, extra: Record<string, unknown> = {}) =>
      t.call('POST', ASK, { token, body: { q, sources: ['paper', 'book'], ...extra } });
    const passagesOf = (id: string) =>
      t.deps.db
        .selectFrom('corpus_passages')
        .select(['position', 'section', 'title', 'source', 'body'])
        .where('document_id', '=', id)
        .orderBy('position')
        .execute();

    test('each format is split into passages that keep title, section and position', async () => {
      const text = writeFile(
        dir,
        'notes.txt',
        'Field notes on kelp\n\nGiant kelp grows half a metre a day in cold water.\n',
      );
      const markdown = writeFile(
        dir,
        'guide.md',
        '---\ntitle: Knot guide\nauthor: R. Sailor\n---\nIntro line.\n\n## Bowline\n\nThe bowline makes a fixed loop at the end of a rope.\n\n```\n## not a heading\n```\n',
      );
      const html = writeFile(
        dir,
        'comet.html',
        '<html><head><title>Comets</title><meta name="author" content="E. Halley"><meta name="citation_publication_date" content="1705-01-01"><script>var orbit = 1;</script></head><body><nav>Menu orbit</nav><h1>Comets</h1><p>Intro.</p><h2>Periodic orbits</h2><p>A periodic comet returns on an elliptical <b>orbit</b> &amp; is predictable.</p></body></html>',
      );
      const pdf = writeFile(
        dir,
        'glacier.pdf',
        tinyPdf(['Glaciers carve valleys.', 'Moraines mark their retreat.'], {
          title: 'Glacier paper',
          author: 'L. Agassiz',
          year: 1840,
        }),
      );
      const outcomes = [
        await add(t.deps, text, { source: 'paper' }),
        await add(t.deps, markdown, { source: 'book' }),
        await add(t.deps, html, { source: 'paper' }),
        await add(t.deps, pdf, { source: 'paper' }),
      ];
      assert.deepEqual(
        outcomes.map((o) => [o.status, o.title]),
        [
          ['added', 'Field notes on kelp'],
          ['added', 'Knot guide'],
          ['added', 'Comets'],
          ['added', 'Glacier paper'],
        ],
      );
      assert.deepEqual(await passagesOf(outcomes[1].id), [
        { position: 0, section: '', title: 'Knot guide', source: 'book', body: 'Intro line.' },
        {
          position: 1,
          section: 'Bowline',
          title: 'Knot guide',
          source: 'book',
          body: 'The bowline makes a fixed loop at the end of a rope.\n``` ## not a heading ```',
        },
      ]);
      assert.deepEqual(
        (await passagesOf(outcomes[2].id)).map((p) => [p.section, p.body]),
        [
          ['Comets', 'Intro.'],
          ['Periodic orbits', 'A periodic comet returns on an elliptical orbit & is predictable.'],
        ],
        'script, head and nav text stay out',
      );
      assert.deepEqual(
        (await passagesOf(outcomes[3].id)).map((p) => [p.section, p.body]),
        [['Page 1', 'Glaciers carve valleys.\nMoraines mark their retreat.']],
      );
      const documents = await t.deps.db
        .selectFrom('corpus_documents')
        .select(['id', 'title', 'authors', 'year', 'source', 'passage_count'])
        .where(
          'id',
          'in',
          outcomes.map((o) => o.id),
        )
        .orderBy('title')
        .execute();
      assert.deepEqual(
        documents.map((d) => [
          d.title,
          d.authors,
          d.year === null ? null : Number(d.year),
          d.source,
          Number(d.passage_count),
        ]),
        [
          ['Comets', 'E. Halley', 1705, 'paper', 2],
          ['Field notes on kelp', '', null, 'paper', 1],
          ['Glacier paper', 'L. Agassiz', 1840, 'paper', 1],
          ['Knot guide', 'R. Sailor', null, 'book', 2],
        ],
      );
      const found = await ask('moraines retreat');
      assert.equal(found.status, 200);
      assert.deepEqual(found.body, {
        answered_by: 'index',
        via: 'agent',
        results: [
          {
            id: `${outcomes[3].id}#0`,
            title: 'Glacier paper',
            source: 'paper',
            authors: 'L. Agassiz',
            year: 1840,
            url: null,
            section: 'Page 1',
            snippet: 'Glaciers carve valleys.\n<mark>Moraines</mark> mark their <mark>retreat</mark>.',
            score: found.body.results[0].score,
          },
        ],
      });
      assert.ok(found.body.results[0].score > 0);
      assert.equal((await ask('orbit')).body.results[0].section, 'Periodic orbits');
    });

    test('re-adding a changed file replaces its passages; an unchanged one is left alone', async () => {
      const path = writeFile(dir, 'volcano.md', '# Volcanoes\n\n## Basalt\n\nBasalt flows are runny.\n');
      const first = await add(t.deps, path, { source: 'paper' });
      assert.equal((await add(t.deps, path, { source: 'paper' })).status, 'unchanged');
      writeFile(
        dir,
        'volcano.md',
        '# Volcanoes\n\n## Rhyolite\n\nRhyolite magma is sticky.\n\n## Ash\n\nAsh travels far.\n',
      );
      const second = await add(t.deps, path, { source: 'paper' });
      assert.deepEqual([second.id, second.status, second.passages], [first.id, 'replaced', 2]);
      assert.deepEqual(
        (await passagesOf(first.id)).map((p) => [p.position, p.section]),
        [
          [0, 'Rhyolite'],
          [1, 'Ash'],
        ],
      );
      assert.deepEqual((await ask('basalt')).body.results, [], 'the old passages are gone from the index');
      assert.equal((await ask('rhyolite')).body.results[0].id, `${first.id}#0`);
      assert.equal(await removeDocument(t.deps, path), true);
      assert.deepEqual(await passagesOf(first.id), []);
      assert.deepEqual((await ask('rhyolite')).body.results, []);
    });

    test('a URL is fetched, its format taken from the content type, and its address kept', async () => {
      const server = createServer((_request, response) => {
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        response.end('<title>Remote atlas</title><h2>Fjords</h2><p>Fjords are drowned glacial valleys.</p>');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const address = server.address();
      const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/atlas`;
      try {
        const outcome = await ingest(
          t.deps,
          await fetchSource(url, { ...t.deps.config.research, allowPrivateUrls: true }),
          { source: 'book' },
        );
        assert.equal(outcome.id, documentId(url));
        const result = (await ask('fjords')).body.results[0];
        assert.deepEqual(
          [result.title, result.section, result.url, result.source],
          ['Remote atlas', 'Fjords', url, 'book'],
        );
      } finally {
        server.close();
      }
    });
  });
}
