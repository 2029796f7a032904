import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { createSession, SESSION_COOKIE } from '../src/domain/auth/sessions.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';
import { addSmallCorpus } from './support/research-corpus.ts';

const ASK = '/api/research/ask';

for (const engine of engines) {
  describe(`research ask (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    let token: string;
    const logLines: string[] = [];
    before(async () => {
      const logStream = new Writable({
        write(chunk, _encoding, done) {
          logLines.push(String(chunk));
          done();
        },
      });
      t = await startTestApp({ engine: engine.name, limits: { researchPerHour: 1000 }, logStream });
      await addSmallCorpus(t.deps);
      token = await t.token(await t.member('resident'), ['research:query']);
    });
    after(() => t?.close());

    const ask = (body: unknown, credential: string = token) =>
      t.call('POST', ASK, { token: credential, body });

    test('papers by default; sources filter; each result carries the documented fields', async () => {
      const papers = await ask({ q: 'fresnel lens' });
      assert.equal(papers.status, 200);
      assert.equal(papers.body.answered_by, 'index');
      assert.equal(papers.body.via, 'agent', 'via is the credential path, as on every operation');
      assert.deepEqual(
        papers.body.results.map((r: { title: string; section: string; source: string }) => [
          r.title,
          r.section,
          r.source,
        ]),
        [
          ['Lighthouse optics', 'Fresnel lenses'],
          ['Lighthouse optics', 'Rotation'],
        ].map(([title, section]) => [title, section, 'paper']),
      );
      const first = papers.body.results[0];
      assert.deepEqual(Object.keys(first).sort(), [
        'authors',
        'id',
        'score',
        'section',
        'snippet',
        'source',
        'title',
        'url',
        'year',
      ]);
      assert.deepEqual([first.authors, first.year, first.url], ['Test Author', 2020, null]);
      assert.match(first.snippet, /<mark>lens<\/mark>/);
      const books = await ask({ q: 'lighthouse loaf', sources: ['book'] });
      assert.deepEqual(
        books.body.results.map((r: { section: string }) => r.section),
        ['Lighthouse loaf', 'Sourdough starter'].slice(0, books.body.results.length),
      );
      assert.ok(books.body.results.every((r: { source: string }) => r.source === 'book'));
      const both = await ask({ q: 'lighthouse', sources: ['paper', 'book'], k: 50 });
      assert.deepEqual(
        new Set(both.body.results.map((r: { source: string }) => r.source)),
        new Set(['paper', 'book']),
      );
      assert.deepEqual((await ask({ q: '?! --' })).body.results, [], 'no words, no results');
    });

    test('k is 1..50, default 10', async () => {
      assert.equal((await ask({ q: 'waggle dance distance sun', k: 1 })).body.results.length, 1);
      assert.equal((await ask({ q: 'waggle', k: 50 })).status, 200);
      for (const k of [0, 51, 2.5, '3']) {
        const refused = await ask({ q: 'waggle', k });
        assert.equal(refused.status, 400, String(k));
        assert.equal(refused.body.error_kind, 'validation');
        assert.equal(refused.body.field, 'k');
      }
    });

    test('every refusal has its status in the Error shape', async () => {
      const cases: [unknown, number, string][] = [
        [{ q: '' }, 400, 'q'],
        [{ q: 'x'.repeat(501) }, 400, 'q'],
        [{ q: 'bees', model: 'small' }, 400, 'model'],
        [{ q: 'bees', synthesize: true, model: 'huge' }, 400, 'model'],
        [{ q: 'bees', sources: ['blog'] }, 400, 'sources'],
        [{ q: 'bees', extra: 1 }, 400, 'extra'],
      ];
      for (const [body, status, field] of cases) {
        const response = await ask(body);
        assert.equal(response.status, status, JSON.stringify(body).slice(0, 60));
        assert.equal(response.body.field.split('.')[0], field);
        assert.equal(response.body.error_kind, 'validation');
        assert.equal(typeof response.body.request_id, 'string');
      }
      const anonymous = await t.call('POST', ASK, { body: { q: 'bees' } });
      assert.equal(anonymous.status, 401);
      const unscoped = await t.token(await t.member('resident'), ['directory:search']);
      const forbidden = await ask({ q: 'bees' }, unscoped);
      assert.deepEqual([forbidden.status, forbidden.body.error], [403, 'insufficient_scope']);
      const big = await t.call('POST', ASK, {
        token,
        rawBody: JSON.stringify({ q: 'b', pad: 'x'.repeat(9000) }),
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(big.status, 413);
    });

    test('synthesis without a provider: an extractive answer that cites only returned results', async () => {
      const response = await ask({ q: 'how do bees tell the distance to flowers', synthesize: true, k: 3 });
      assert.equal(response.status, 200);
      const { body } = response;
      assert.deepEqual(Object.keys(body).sort(), [
        'answer',
        'answered_by',
        'citations',
        'k',
        'model',
        'q',
        'results',
        'usage',
        'via',
      ]);
      assert.deepEqual(
        [body.q, body.k, body.model, body.answered_by, body.via],
        ['how do bees tell the distance to flowers', 3, 'small', 'extractive', 'agent'],
      );
      assert.deepEqual(body.usage, { input_tokens: 0, output_tokens: 0 });
      const ids = body.results.map((r: { id: string }) => r.id);
      assert.ok(body.citations.length > 0);
      for (const citation of body.citations) {
        assert.equal(citation.id, ids[citation.n - 1], 'a citation points at the n-th result');
        assert.ok(body.answer.includes(`[${citation.n}]`));
      }
      for (const [, n] of body.answer.matchAll(/\[(\d+)\]/g)) assert.ok(Number(n) <= ids.length);
      assert.match(body.answer, /waggle run encodes the distance/);
      const none = await ask({ q: 'quantum chromodynamics', synthesize: true, model: 'large' });
      assert.deepEqual([none.body.results, none.body.citations, none.body.model], [[], [], 'large']);
    });

    test('sandbox tokens get real answers', async () => {
      const sandbox = await t.token(await t.member('resident'), ['research:query'], { sandbox: true });
      const response = await ask({ q: 'spring tides' }, sandbox);
      assert.equal(response.status, 200);
      assert.equal(response.body.results[0].title, 'Tides');
      assert.equal(response.body.simulated, undefined);
    });

    test('60 per member per hour, shared by all the member’s tokens and sessions', async () => {
      const limited = await startTestApp({ database: t.database, limits: { researchPerHour: 3 } });
      try {
        const member = await limited.member('resident');
        const [a, b] = [
          await limited.token(member, ['research:query']),
          await limited.token(member, ['research:query']),
        ];
        const cookie = `${SESSION_COOKIE}=${await createSession(limited.deps.db, limited.clock, member.id)}`;
        const call = (credential: { token?: string; cookie?: string }) =>
          limited.call('POST', ASK, {
            token: credential.token,
            headers: credential.cookie ? { cookie: credential.cookie } : {},
            body: { q: 'tides' },
          });
        assert.equal((await call({ token: a })).status, 200);
        assert.equal((await call({ token: b })).status, 200);
        const bySession = await call({ cookie });
        assert.equal(bySession.status, 200);
        assert.equal(bySession.body.via, 'session', 'a browser session is the session credential path');
        assert.equal(bySession.body.answered_by, 'index');
        assert.match(bySession.headers.get('ratelimit') ?? '', /"research";r=0/);
        const refused = await call({ token: b });
        assert.equal(refused.status, 429);
        assert.equal(refused.body.error_kind, 'rate_limit');
        assert.ok(Number(refused.headers.get('retry-after')) > 0);
        const other = await limited.token(await limited.member('resident'), ['research:query']);
        assert.equal((await call({ token: other })).status, 200, 'another member has their own budget');
        const stored = await limited.deps.db
          .selectFrom('counters')
          .select(['key', 'count'])
          .where('key', 'like', `research:${member.id}:%`)
          .execute();
        assert.deepEqual(
          stored.map((r) => Number(r.count)),
          [4],
        );
      } finally {
        await limited.app.close();
        await limited.deps.close();
      }
    });

    test('the question is never logged or stored', async () => {
      const secret = 'zanzibar quokka marmalade 7319';
      await ask({ q: secret });
      await ask({ q: secret, synthesize: true });
      await ask({ q: secret, model: 'small' });
      await ask({ q: `${secret} ${'x'.repeat(500)}` });
      assert.ok(logLines.length > 0, 'the log was captured');
      assert.ok(!logLines.join('').includes('quokka'), 'no log line carries the query');
      for (const table of ['activity', 'counters', 'idempotency', 'settings'] as const) {
        const rows = await t.deps.db.selectFrom(table).selectAll().execute();
        assert.ok(!JSON.stringify(rows).includes('quokka'), table);
      }
    });
  });
}
