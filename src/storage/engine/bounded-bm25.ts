// BM25 over a bounded set of candidate rows, for the embedded engine's full-text searches. FTS5's
// own bm25() first counts every row that holds each query word (its inverse document frequency),
// so a word most rows hold costs a pass over the whole index however few rows are ranked. Here the
// candidates are the collection: the same formula (k1 1.2, b 0.75, every column weighted 1, as
// bm25() with no weights), with the frequencies and lengths read from the candidates' own text,
// tokenized as FTS5's unicode61 tokenizer with remove_diacritics does.

const K1 = 1.2;
const B = 0.75;

export interface Candidate {
  id: string;
  /** The indexed columns' text. */
  columns: readonly string[];
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: the test is for any non-ASCII character
const NON_ASCII = /[^\u0000-\u007f]/;
const SEPARATORS = /[^\p{L}\p{N}]+/u;
const ASCII_SEPARATORS = /[^a-z0-9]+/;

/** A text's tokens as unicode61 with remove_diacritics splits and folds them (empty ones too). */
function tokens(text: string): string[] {
  // Most profiles are plain ASCII, which needs no decomposition and splits on a simpler class.
  if (!NON_ASCII.test(text)) return text.toLowerCase().split(ASCII_SEPARATORS);
  return text
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .split(SEPARATORS);
}

/**
 * The candidates' ids, best first (ties by id): each word matches a token it equals, or that it
 * begins when `prefix` is set.
 */
export function rankCandidates(
  candidates: readonly Candidate[],
  words: readonly string[],
  prefix: boolean,
): string[] {
  const folded = words.map((word) => tokens(word).join(''));
  const rows = candidates.map((candidate) => {
    const hits = folded.map(() => 0);
    let length = 0;
    for (const column of candidate.columns)
      for (const token of tokens(column)) {
        if (token === '') continue;
        length++;
        for (let i = 0; i < folded.length; i++)
          if (prefix ? token.startsWith(folded[i]) : token === folded[i]) hits[i]++;
      }
    return { id: candidate.id, length, hits };
  });
  const total = rows.length;
  const averageLength = rows.reduce((sum, row) => sum + row.length, 0) / Math.max(total, 1) || 1;
  const idf = folded.map((_, i) => {
    const holding = rows.filter((row) => row.hits[i] > 0).length;
    // FTS5 keeps a word every row holds at a tiny positive weight rather than zero or below.
    return Math.max(Math.log((total - holding + 0.5) / (holding + 0.5)), 1e-6);
  });
  const scored = rows.map((row) => {
    const norm = K1 * (1 - B + (B * row.length) / averageLength);
    const score = row.hits.reduce((sum, f, i) => sum + (idf[i] * f * (K1 + 1)) / (f + norm), 0);
    return { id: row.id, score };
  });
  scored.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return scored.map((row) => row.id);
}
