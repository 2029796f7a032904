import type SQLite from 'better-sqlite3';
import { corpusPassages } from '../../storage/corpus-passages.ts';
import type { Source } from './document.ts';
import type { PassageIndex } from './passage-index.ts';
import { queryTerms } from './query-terms.ts';
import type { ResearchResult } from './result.ts';
import { forEachTerm, termsOfWords } from './tokenizer.ts';

/** A result together with its whole passage, which synthesis reads and the wire never carries. */
export interface RetrievedPassage {
  result: ResearchResult;
  text: string;
}

const SNIPPET_TOKENS = 32;
/** How many words before the first match a snippet starts, for context. */
const SNIPPET_LEAD = 3;

/**
 * The stretch of `text` of at most 32 words that holds the most distinct query terms (then the most
 * matches), each match wrapped in <mark>…</mark>, with "…" where the text goes on.
 */
export function snippetOf(text: string, terms: ReadonlySet<string>): string {
  const starts: number[] = [];
  const ends: number[] = [];
  const matched: (string | null)[] = [];
  forEachTerm(text, (term, start, end) => {
    starts.push(start);
    ends.push(end);
    matched.push(terms.has(term) ? term : null);
  });
  const words = starts.length;
  let first = 0;
  if (words > SNIPPET_TOKENS) {
    let best = { distinct: -1, hits: -1 };
    for (let hit = 0; hit < words; hit++) {
      if (matched[hit] === null) continue;
      const from = Math.max(0, Math.min(hit - SNIPPET_LEAD, words - SNIPPET_TOKENS));
      const inWindow = matched.slice(from, from + SNIPPET_TOKENS).filter((m) => m !== null);
      const distinct = new Set(inWindow).size;
      if (distinct > best.distinct || (distinct === best.distinct && inWindow.length > best.hits)) {
        best = { distinct, hits: inWindow.length };
        first = from;
      }
    }
  }
  const last = Math.min(words, first + SNIPPET_TOKENS) - 1;
  const from = first === 0 ? 0 : starts[first];
  const to = last === words - 1 || words === 0 ? text.length : ends[last];
  let out = first === 0 ? '' : '…';
  let at = from;
  for (let word = first; word <= last; word++) {
    if (matched[word] === null) continue;
    out += `${text.slice(at, starts[word])}<mark>${text.slice(starts[word], ends[word])}</mark>`;
    at = ends[word];
  }
  out += text.slice(at, to);
  return to < text.length ? `${out}…` : out;
}

/** The k best passages for the query by BM25, restricted to the given sources. */
export function retrieve(
  index: PassageIndex,
  db: SQLite.Database,
  query: string,
  k: number,
  sources: readonly Source[],
): RetrievedPassage[] {
  const terms = termsOfWords(queryTerms(query));
  if (terms.length === 0 || sources.length === 0) return [];
  const termSet = new Set(terms);
  return index.search(terms, k, sources).flatMap(({ passageId, score }) => {
    const row = corpusPassages.details(db, passageId);
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
          snippet: snippetOf(row.body, termSet),
          score: Math.round(score * 1000) / 1000,
        },
      },
    ];
  });
}
