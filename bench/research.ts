// Research retrieval: relevance against a plain BM25 baseline (minisearch) on the same passages, the
// ingestion rate, index size, and POST /api/research/ask latency at a replicated corpus size.
import { statSync } from 'node:fs';
import type autocannon from 'autocannon';
import SQLite from 'better-sqlite3';
import MiniSearch from 'minisearch';
import { PassageIndex } from '../src/domain/research/passage-index.ts';
import { retrieve } from '../src/domain/research/search.ts';
import { LABELLED_QUERIES, type LabelledQuery } from './research-queries.ts';
import { CONNECTIONS, type Figures, load, mintBenchToken, residentMb, startProcess } from './support.ts';

interface PassageRow {
  id: number;
  document_id: string;
  position: number;
  source: string;
  title: string;
  section: string;
  body: string;
  url: string | null;
}

function docOf(url: string | null): string {
  if (!url) return '';
  if (url.includes('gnu.org')) return 'bash';
  return /\/([^/]+)\.html$/.exec(url)?.[1] ?? '';
}

function relevantIds(passages: PassageRow[], query: LabelledQuery): Set<string> {
  const inDoc = passages.filter((p) => docOf(p.url) === query.doc);
  const inSection = query.section ? inDoc.filter((p) => query.section?.test(p.section)) : inDoc;
  // A section pattern that matches nothing falls back to the whole document (reported below).
  return new Set((inSection.length > 0 ? inSection : inDoc).map((p) => `${p.document_id}#${p.position}`));
}

function ndcgAt10(ranked: string[], relevant: Set<string>): number {
  const dcg = ranked
    .slice(0, 10)
    .reduce((sum, id, i) => sum + (relevant.has(id) ? 1 / Math.log2(i + 2) : 0), 0);
  let ideal = 0;
  for (let i = 0; i < Math.min(10, relevant.size); i++) ideal += 1 / Math.log2(i + 2);
  return ideal === 0 ? 0 : dcg / ideal;
}

/** Relevant passages found in the top 10, over the most that could be (min of 10 and all relevant). */
function recallAt10(ranked: string[], relevant: Set<string>): number {
  const found = ranked.slice(0, 10).filter((id) => relevant.has(id)).length;
  return found / Math.min(10, relevant.size);
}

export async function relevance(databaseFile: string) {
  const db = new SQLite(databaseFile, { readonly: true });
  const passages = db
    .prepare(
      'select p.id, p.document_id, p.position, p.source, p.title, p.section, p.body, d.url from corpus_passages p join corpus_documents d on d.id = p.document_id',
    )
    .all() as PassageRow[];
  const baseline = new MiniSearch<PassageRow & { key: string }>({
    idField: 'key',
    fields: ['title', 'section', 'body'],
    storeFields: ['source'],
  });
  baseline.addAll(passages.map((p) => ({ ...p, key: `${p.document_id}#${p.position}` })));
  const index = await PassageIndex.build(db);
  const totals = { ours: { ndcg: 0, recall: 0 }, baseline: { ndcg: 0, recall: 0 } };
  let fallbacks = 0;
  for (const query of LABELLED_QUERIES) {
    const relevant = relevantIds(passages, query);
    if (
      query.section &&
      ![...relevant].some((id) =>
        passages.find((p) => `${p.document_id}#${p.position}` === id && query.section?.test(p.section)),
      )
    )
      fallbacks++;
    const ours = retrieve(index, db, query.q, 10, query.sources).map((r) => r.result.id);
    const theirs = baseline
      .search(query.q, { filter: (r) => query.sources.includes(r.source) })
      .slice(0, 10)
      .map((r) => String(r.id));
    totals.ours.ndcg += ndcgAt10(ours, relevant);
    totals.ours.recall += recallAt10(ours, relevant);
    totals.baseline.ndcg += ndcgAt10(theirs, relevant);
    totals.baseline.recall += recallAt10(theirs, relevant);
  }
  db.close();
  const n = LABELLED_QUERIES.length;
  const round = (x: number) => Math.round((1000 * x) / n) / 1000;
  return {
    queries: n,
    passages: passages.length,
    sectionFallbacks: fallbacks,
    ours: { ndcg10: round(totals.ours.ndcg), recall10: round(totals.ours.recall) },
    minisearch: { ndcg10: round(totals.baseline.ndcg), recall10: round(totals.baseline.recall) },
  };
}

function fileBytes(file: string): number {
  return [file, `${file}-wal`].reduce((sum, f) => {
    try {
      return sum + statSync(f).size;
    } catch {
      return sum;
    }
  }, 0);
}

/** Copies the real corpus's passages until the table holds `target` of them (each copy its own document). */
export function replicate(databaseFile: string, target: number) {
  const db = new SQLite(databaseFile);
  db.pragma('journal_mode = WAL');
  db.pragma('wal_checkpoint(TRUNCATE)');
  const before = fileBytes(databaseFile);
  const count = () => Number(db.prepare('select count(*) from corpus_passages').pluck().get());
  const base = Number(
    db.prepare("select count(*) from corpus_passages where document_id not like '%:%'").pluck().get(),
  );
  const existing = count();
  const started = Date.now();
  // Copies already made by an earlier, smaller size go on being used; new ones are numbered after them.
  const made = Math.ceil(existing / base) - 1;
  const copies = Math.ceil(target / base) - 1;
  const addDocs = db.prepare(
    "insert into corpus_documents (id, source, title, authors, year, url, body, added_at, origin, content_hash, passage_count, revision) select id || ':' || ?, source, title, authors, year, url, '', added_at, null, null, passage_count, 1 from corpus_documents where id not like '%:%'",
  );
  const addPassages = db.prepare(
    "insert into corpus_passages (document_id, position, source, title, section, body) select document_id || ':' || ?, position, source, title, section, body from corpus_passages where document_id not like '%:%' limit ?",
  );
  for (let copy = made + 1; copy <= copies; copy++) {
    db.transaction(() => {
      addDocs.run(copy);
      addPassages.run(copy, Math.min(base, target - count()));
    })();
  }
  db.pragma('wal_checkpoint(TRUNCATE)');
  const total = count();
  const seconds = (Date.now() - started) / 1000;
  const bytesPerMillion = Math.round(((fileBytes(databaseFile) - before) / (total - existing)) * 1_000_000);
  db.close();
  return {
    total,
    seconds,
    passagesPerSecond: Math.round((total - existing) / seconds),
    mbPerMillion: Math.round(bytesPerMillion / 1e6),
  };
}

/** Latency of POST /api/research/ask (no synthesis), the labelled queries in turn. */
export async function askLatency(env: Record<string, string>, label: string): Promise<Figures[]> {
  const { token } = mintBenchToken(env, `research-${label.replace(/\W+/g, '-')}`, 'research:query');
  const bodies = LABELLED_QUERIES.map((q) => JSON.stringify({ q: q.q, sources: q.sources }));
  /** Starts a server and times its first answer from the moment it listens. */
  const firstAnswer = async (when: string) => {
    const server = await startProcess(['bin/agent-commons.js', 'serve', '--no-seed'], env, '/healthz');
    const check = await fetch(`${server.url}/api/research/ask`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: bodies[0],
    });
    const text = await check.text();
    if (check.status !== 200 || !text.includes('"results":[{'))
      throw new Error(`research ask: ${check.status} ${text.slice(0, 200)}`);
    console.log(
      `research index at ${label}, ${when}: first answer ${((Date.now() - server.listenedAt) / 1000).toFixed(1)} s after the server listened, server resident ${residentMb(server.child.pid ?? 0)} MB`,
    );
    return server;
  };
  // The first start builds the index and stores it; a restart reads it back (docs/research.md).
  await (await firstAnswer('first start (index built from the passages)')).stop();
  const server = await firstAnswer('restart (index read from its file)');
  try {
    let next = 0;
    const options = (connections: number): autocannon.Options => ({
      url: `${server.url}/api/research/ask`,
      method: 'POST',
      connections,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      requests: [{ setupRequest: (request) => ({ ...request, body: bodies[next++ % bodies.length] }) }],
    });
    // Latency is what one client waiting for each answer sees; throughput is measured under the
    // benchmark's usual 50 connections, where a request's time is mostly its wait in the queue.
    const rows = [
      await load(`POST /api/research/ask, ${label}, 1 client`, options(1), server.child.pid),
      await load(
        `POST /api/research/ask, ${label}, ${CONNECTIONS} connections`,
        options(CONNECTIONS),
        server.child.pid,
      ),
    ];
    console.log(
      `research index at ${label}: server resident ${residentMb(server.child.pid ?? 0)} MB after the load`,
    );
    return rows;
  } finally {
    await server.stop();
  }
}
