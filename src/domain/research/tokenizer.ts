import { stemmer } from 'stemmer';

/**
 * Words as the research index sees them: runs of letters and digits, lowercased, diacritics removed,
 * reduced to their Porter stem ("Indexes" and "indexing" are both "index"). Queries and passages go
 * through the same function, so a query word finds every inflection of it.
 */

const NON_ASCII_WORD_CHAR = /[\p{L}\p{N}\p{M}]/u;
const MARKS = /\p{M}/gu;
const NON_ASCII = /[^\p{ASCII}]/u;
const MAX_STEMMED_LENGTH = 64;

/** Raw word (as written) → its term; the vocabulary of a corpus is small next to its token count. */
const termCache = new Map<string, string>();
const TERM_CACHE_LIMIT = 500_000;

function isWordChar(code: number): boolean {
  if (code < 128)
    return (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || (code >= 48 && code <= 57);
  return NON_ASCII_WORD_CHAR.test(String.fromCharCode(code));
}

/** The term of one word as written. */
export function termOf(word: string): string {
  const cached = termCache.get(word);
  if (cached !== undefined) return cached;
  let folded = word.toLowerCase();
  if (NON_ASCII.test(folded)) folded = folded.normalize('NFD').replace(MARKS, '');
  const term = folded.length > 2 && folded.length <= MAX_STEMMED_LENGTH ? stemmer(folded) : folded;
  if (termCache.size >= TERM_CACHE_LIMIT) termCache.clear();
  termCache.set(word, term);
  return term;
}

/** Calls `each` with every word's term and where the word stands in `text` (UTF-16 offsets). */
export function forEachTerm(text: string, each: (term: string, start: number, end: number) => void): void {
  const length = text.length;
  let start = -1;
  for (let i = 0; i <= length; i++) {
    const inWord = i < length && isWordChar(text.charCodeAt(i));
    if (inWord) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      const term = termOf(text.slice(start, i));
      if (term.length > 0) each(term, start, i);
      start = -1;
    }
  }
}

/** The distinct terms of a list of query words, in order. */
export function termsOfWords(words: readonly string[]): string[] {
  const terms = new Set<string>();
  for (const word of words) forEachTerm(word, (term) => terms.add(term));
  return [...terms];
}
