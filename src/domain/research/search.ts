import type SQLite from 'better-sqlite3';
import type { Source } from './document.ts';
import { queryTerms } from './query-terms.ts';

export interface ResearchResult {
  /** `<document id>#<passage position>`: stable while the document is unchanged. */
  id: string;
  title: string;
  source: string;
  authors: string;
  year: number | null;
  url: string | null;
  section: string;
  /** The best-matching stretch of the passage, query words wrapped in <mark>…</mark>. */
  snippet: string;
  /** BM25 relevance (higher is better); comparable only within one answer. */
  score: number;
}

/** A result together with its whole passage, which synthesis reads and the wire never carries. */
export interface RetrievedPassage {
  result: ResearchResult;
  text: string;
}

/** BM25 weights of the indexed columns: title, section, body, source (a filter only). */
export const COLUMN_WEIGHTS = [1, 2, 1, 0] as const;
const SNIPPET_TOKENS = 32;

const statements = new WeakMap<SQLite.Database, { rank: SQLite.Statement; details: SQLite.Statement }>();

function prepared(db: SQLite.Database) {
  let found = statements.get(db);
  if (!found) {
    found = {
      // ORDER BY rank lets FTS5 sort inside the index and hand back only the top k, so the snippet is
      // built for those rows alone.
      rank: db.prepare(
        `select rowid as id, rank, snippet(corpus_fts, 2, '<mark>', '</mark>', '…', ${SNIPPET_TOKENS}) as snippet from corpus_fts where corpus_fts match ? and rank match 'bm25(${COLUMN_WEIGHTS.join(', ')})' order by rank limit ?`,
      ),
      details: db.prepare(
        'select p.document_id, p.position, p.title, p.section, p.source, p.body, d.authors, d.year, d.url from corpus_passages p join corpus_documents d on d.id = p.document_id where p.id = ?',
      ),
    };
    statements.set(db, found);
  }
  return found;
}

/** The FTS5 expression: any of the words in title, section or body, restricted to the sources asked for. */
export function matchExpression(terms: string[], sources: readonly Source[]): string {
  const words = terms.map((t) => `"${t}"`).join(' OR ');
  const filter = sources.map((s) => `"${s}"`).join(' OR ');
  return `{title section body} : (${words}) AND source : (${filter})`;
}

/** The k best passages for the query by BM25 (FTS5), restricted to the given sources. */
export function retrieve(
  db: SQLite.Database,
  query: string,
  k: number,
  sources: readonly Source[],
): RetrievedPassage[] {
  const terms = queryTerms(query);
  if (terms.length === 0 || sources.length === 0) return [];
  const expression = matchExpression(terms, sources);
  const { rank, details } = prepared(db);
  const ranked = rank.all(expression, k) as { id: number; rank: number; snippet: string }[];
  return ranked.flatMap(({ id, rank: bm25, snippet }) => {
    const row = details.get(id) as
      | {
          document_id: string;
          position: number;
          title: string;
          section: string;
          source: string;
          body: string;
          authors: string;
          year: number | null;
          url: string | null;
        }
      | undefined;
    if (!row) return [];
    return [
      {
        text: row.body,
        result: {
          id: `${row.document_id}#${row.position}`,
          title: row.title,
          source: row.source,
          authors: row.authors,
          year: row.year === null ? null : Number(row.year),
          url: row.url,
          section: row.section,
          snippet,
          score: Math.round(-bm25 * 1000) / 1000,
        },
      },
    ];
  });
}
