import { queryTerms } from './query-terms.ts';
import type { RetrievedPassage } from './search.ts';

const PASSAGES_READ = 5;
const SENTENCES_KEPT = 3;
/** Words compared by their first letters, a cheap stand-in for stemming ("indexes" meets "indexing"). */
const STEM = 5;

function stems(text: string): Set<string> {
  return new Set((text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).map((w) => w.slice(0, STEM)));
}

function sentences(text: string): string[] {
  return (text.match(/[^.!?]+[.!?]+(\s|$)|[^.!?]+$/g) ?? [])
    .map((s) => s.replace(/\s+/g, ' ').trim())
    .filter((s) => s.length >= 20 && s.length <= 400);
}

/**
 * The offline synthesizer: the sentences of the top passages that share the most words with the
 * question, each followed by the number of the passage it was taken from. It says only what the
 * passages say, and cites nothing it was not given.
 */
export function composeExtractiveAnswer(query: string, passages: RetrievedPassage[]): string {
  if (passages.length === 0) return 'The corpus has no passage that matches this question.';
  const wanted = queryTerms(query).map((t) => t.slice(0, STEM));
  const candidates = passages.slice(0, PASSAGES_READ).flatMap(({ text }, index) =>
    sentences(text).map((sentence, order) => {
      const words = stems(sentence);
      const overlap = wanted.filter((w) => words.has(w)).length;
      // Earlier passages rank higher, and within one, earlier sentences.
      return { sentence, n: index + 1, score: overlap - index * 0.1 - order * 0.01 };
    }),
  );
  const picked = candidates
    .filter((c) => c.score > 0)
    .sort((a, b) => b.score - a.score)
    .slice(0, SENTENCES_KEPT);
  if (picked.length === 0)
    picked.push({
      sentence: sentences(passages[0].text)[0] ?? passages[0].text.slice(0, 300),
      n: 1,
      score: 0,
    });
  picked.sort((a, b) => a.n - b.n);
  const body = picked.map((p) => `${p.sentence} [${p.n}]`).join(' ');
  return `From the retrieved passages (extractive summary, no language model): ${body}`;
}
