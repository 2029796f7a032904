import type SQLite from 'better-sqlite3';
import { corpusPassages } from '../../storage/corpus-passages.ts';
import { SOURCES, type Source } from './document.ts';
import type { IndexParts } from './index-file.ts';
import { forEachTerm } from './tokenizer.ts';

/** BM25 weights of the ranked fields: a word in a section heading counts twice. */
export const FIELD_WEIGHTS = { title: 1, section: 2, body: 1 } as const;
const K1 = 1.2;
const B = 0.75;
const MAX_TF = 65_535;
/**
 * A posting stores its BM25 term weight without the IDF, tf·(k1+1)/(tf + k1·(1−b+b·len/avg)), which
 * lies in (0, k1+1), as a 16-bit fraction of k1+1: a search then does one multiply-add per posting.
 */
const IMPACT_STEPS = 65_535;
const IMPACT_UNIT = (K1 + 1) / IMPACT_STEPS;
/** Passage positions take 24 bits in a posting (a 16-bit and an 8-bit array: 5 bytes a posting, not 6). */
const MAX_PASSAGES = 1 << 24;
/** Passages read per slice while building. */
const BUILD_SLICE = 2_000;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export interface Hit {
  /** corpus_passages.id */
  passageId: number;
  /** BM25: higher is better, comparable within one search. */
  score: number;
}

/** A typed array that grows by doubling: the index holds tens of millions of postings. */
class GrowableInt32 {
  values = new Int32Array(1 << 16);
  length = 0;
  push(value: number): void {
    if (this.length === this.values.length) {
      const larger = new Int32Array(this.values.length * 2);
      larger.set(this.values);
      this.values = larger;
    }
    this.values[this.length++] = value;
  }
}

/**
 * The research index: an in-memory inverted index of every passage, built from the stored passages
 * and ranked with BM25 over title, section and body. Postings are kept per term in passage order in
 * two flat arrays, so a search is a tight loop over the postings of the query's terms (a few million
 * additions at a million passages), with no allocation and no I/O.
 */
export class PassageIndex {
  private readonly termIds: Map<string, number>;
  /** Where each term's postings start; the term's end is the next term's start. */
  private readonly termStarts: Uint32Array;
  /** A posting's passage position: postingLows[at] | postingHighs[at] << 16. */
  private readonly postingLows: Uint16Array;
  private readonly postingHighs: Uint8Array;
  private readonly postingImpacts: Uint16Array;
  /** Per term, its highest posting impact: with the IDF, the most the term can add to a score. */
  private readonly termMaxImpacts: Uint16Array;
  /** Per passage (dense position): its row id and its source bit. */
  private readonly passageIds: Float64Array;
  private readonly passageSources: Uint8Array;
  /** How long the build took (kept with the index when it is stored and read back). */
  readonly buildMs: number;
  private readonly accumulator: Float32Array;
  private readonly touched: Int32Array;

  /** An index from its arrays: as built, or as read back from its file (index-file.ts). */
  constructor(parts: IndexParts) {
    this.termIds = new Map(parts.terms.map((term, id) => [term, id]));
    this.termStarts = parts.termStarts;
    this.postingLows = parts.postingLows;
    this.postingHighs = parts.postingHighs;
    this.postingImpacts = parts.postingImpacts;
    this.termMaxImpacts = parts.termMaxImpacts;
    this.passageIds = parts.passageIds;
    this.passageSources = parts.passageSources;
    this.buildMs = parts.buildMs;
    this.accumulator = new Float32Array(this.passageIds.length);
    this.touched = new Int32Array(this.passageIds.length);
  }

  /** The arrays this index is made of, for storing it (index-file.ts). */
  parts(): IndexParts {
    return {
      terms: [...this.termIds.keys()],
      termStarts: this.termStarts,
      postingLows: this.postingLows,
      postingHighs: this.postingHighs,
      postingImpacts: this.postingImpacts,
      termMaxImpacts: this.termMaxImpacts,
      passageIds: this.passageIds,
      passageSources: this.passageSources,
      buildMs: this.buildMs,
    };
  }

  get size(): number {
    return this.passageIds.length;
  }

  /**
   * Reads every stored passage once, a slice at a time with a turn of the event loop between slices,
   * so requests keep being served while a large corpus is indexed.
   */
  static async build(db: SQLite.Database): Promise<PassageIndex> {
    const started = performance.now();
    const termIds = new Map<string, number>();
    const passageIds: number[] = [];
    const sources: number[] = [];
    const lengths: number[] = [];
    // Per passage, its distinct terms and weighted frequencies, one after the other.
    const pairTerms = new GrowableInt32();
    const pairFrequencies = new GrowableInt32();
    const pairStarts: number[] = [];
    let documentFrequencies = new Uint32Array(1 << 14);
    let scratch = new Uint32Array(1 << 14);
    const seen: number[] = [];
    let totalLength = 0;
    let length = 0;

    const count = (weight: number) => (term: string) => {
      let id = termIds.get(term);
      if (id === undefined) {
        id = termIds.size;
        termIds.set(term, id);
        if (id === scratch.length) {
          const grownScratch = new Uint32Array(scratch.length * 2);
          grownScratch.set(scratch);
          scratch = grownScratch;
          const grownFrequencies = new Uint32Array(scratch.length);
          grownFrequencies.set(documentFrequencies);
          documentFrequencies = grownFrequencies;
        }
      }
      if (scratch[id] === 0) seen.push(id);
      scratch[id] += weight;
      length++;
    };
    const inTitle = count(FIELD_WEIGHTS.title);
    const inSection = count(FIELD_WEIGHTS.section);
    const inBody = count(FIELD_WEIGHTS.body);

    for (let after = -1; ; ) {
      const rows = corpusPassages.slice(db, after, BUILD_SLICE);
      if (rows.length === 0) break;
      after = Number(rows[rows.length - 1][0]);
      for (const [id, source, title, section, body] of rows) addPassage(id, source, title, section, body);
      await nextTurn();
    }
    function addPassage(id: number, source: string, title: string, section: string, body: string) {
      length = 0;
      forEachTerm(title, inTitle);
      forEachTerm(section, inSection);
      forEachTerm(body, inBody);
      pairStarts.push(pairTerms.length);
      for (const term of seen) {
        pairTerms.push(term);
        pairFrequencies.push(Math.min(scratch[term], MAX_TF));
        documentFrequencies[term]++;
        scratch[term] = 0;
      }
      seen.length = 0;
      if (passageIds.length === MAX_PASSAGES)
        throw new Error(`the research index holds at most ${MAX_PASSAGES} passages`);
      passageIds.push(Number(id));
      sources.push(sourceBit(source));
      lengths.push(length);
      totalLength += length;
    }
    pairStarts.push(pairTerms.length);

    const termCount = termIds.size;
    const termStarts = new Uint32Array(termCount + 1);
    for (let t = 0; t < termCount; t++) termStarts[t + 1] = termStarts[t] + documentFrequencies[t];
    const averageLength = passageIds.length > 0 ? totalLength / passageIds.length || 1 : 1;
    const lengthNorms = Float64Array.from(lengths, (l) => K1 * (1 - B + (B * l) / averageLength));
    const postingLows = new Uint16Array(pairTerms.length);
    const postingHighs = new Uint8Array(pairTerms.length);
    const postingImpacts = new Uint16Array(pairTerms.length);
    const termMaxImpacts = new Uint16Array(termCount);
    const cursor = termStarts.slice(0, termCount);
    for (let passage = 0; passage < passageIds.length; passage++) {
      if (passage % (BUILD_SLICE * 20) === 0) await nextTurn();
      for (let pair = pairStarts[passage]; pair < pairStarts[passage + 1]; pair++) {
        const term = pairTerms.values[pair];
        const at = cursor[term]++;
        const frequency = pairFrequencies.values[pair];
        const weight = (frequency * (K1 + 1)) / (frequency + lengthNorms[passage]);
        postingLows[at] = passage & 0xffff;
        postingHighs[at] = passage >>> 16;
        const impact = Math.max(1, Math.round(weight / IMPACT_UNIT));
        postingImpacts[at] = impact;
        if (impact > termMaxImpacts[term]) termMaxImpacts[term] = impact;
      }
    }
    return new PassageIndex({
      // A Map keeps insertion order, which is id order: the term list is the id → term table.
      terms: [...termIds.keys()],
      termStarts,
      postingLows,
      postingHighs,
      postingImpacts,
      termMaxImpacts,
      passageIds: Float64Array.from(passageIds),
      passageSources: Uint8Array.from(sources),
      buildMs: performance.now() - started,
    });
  }

  /**
   * The k best passages for the terms (any of them; more, rarer and more frequent terms score higher),
   * restricted to the sources. Ties keep passage order.
   *
   * Exact top k with MaxScore pruning: terms are taken highest score bound first, each one's postings
   * walked in full, until the bounds of the terms left add up to less than the k-th best score so
   * far. From then on no passage that none of the earlier terms matched can enter the top k, so the
   * rest of the terms are only looked up, by galloping search, for the passages still in reach. The
   * common words of a question, whose postings are the longest, are the ones looked up.
   */
  search(terms: readonly string[], k: number, allowed: readonly Source[]): Hit[] {
    let mask = 0;
    for (const source of allowed) mask |= sourceBit(source);
    const plan = this.plan(terms);
    const { accumulator, touched, postingLows, postingHighs, postingImpacts, passageSources } = this;
    const left = new Float64Array(plan.length + 1);
    for (let j = plan.length - 1; j >= 0; j--) left[j] = left[j + 1] + plan[j].bound;
    let touchedCount = 0;
    let threshold = 0;
    let j = 0;
    for (; j < plan.length; j++) {
      if (j > 0 && touchedCount >= k) {
        threshold = kthBest(accumulator, touched, touchedCount, k) * (1 - BOUND_MARGIN);
        if (left[j] < threshold) break;
      }
      const { start, end, scale } = plan[j];
      for (let at = start; at < end; at++) {
        const passage = postingLows[at] | (postingHighs[at] << 16);
        if ((passageSources[passage] & mask) === 0) continue;
        if (accumulator[passage] === 0) touched[touchedCount++] = passage;
        accumulator[passage] += scale * postingImpacts[at];
      }
    }
    if (j < plan.length) {
      let inReach = 0;
      for (let i = 0; i < touchedCount; i++) {
        const passage = touched[i];
        if (accumulator[passage] + left[j] >= threshold) touched[inReach++] = passage;
        else accumulator[passage] = 0;
      }
      touchedCount = inReach;
      const candidates = touched.subarray(0, touchedCount).sort();
      for (; j < plan.length; j++) {
        const { start, end, scale } = plan[j];
        let at = start;
        for (let i = 0; i < candidates.length && at < end; i++) {
          const passage = candidates[i];
          at = gallop(postingLows, postingHighs, at, end, passage);
          if (at < end && (postingLows[at] | (postingHighs[at] << 16)) === passage)
            accumulator[passage] += scale * postingImpacts[at];
        }
      }
    }
    return this.best(touchedCount, k);
  }

  /** The query's terms known to the index with their IDF scale and score bound, highest bound first. */
  private plan(terms: readonly string[]) {
    const passages = this.passageIds.length;
    const plan: { start: number; end: number; scale: number; bound: number }[] = [];
    for (const term of new Set(terms)) {
      const id = this.termIds.get(term);
      if (id === undefined) continue;
      const start = this.termStarts[id];
      const end = this.termStarts[id + 1];
      const documentFrequency = end - start;
      let idf = Math.log((passages - documentFrequency + 0.5) / (documentFrequency + 0.5));
      if (idf <= 0) idf = 1e-6;
      const scale = idf * IMPACT_UNIT;
      plan.push({ start, end, scale, bound: scale * this.termMaxImpacts[id] });
    }
    return plan.sort((a, b) => b.bound - a.bound);
  }

  /** The k best of the touched passages; every touched slot is cleared for the next search. */
  private best(touchedCount: number, k: number): Hit[] {
    const { accumulator, touched } = this;
    const bestPassages: number[] = [];
    const bestScores: number[] = [];
    for (let i = 0; i < touchedCount; i++) {
      const passage = touched[i];
      const score = accumulator[passage];
      accumulator[passage] = 0;
      const full = bestScores.length === k;
      if (full && !beats(score, passage, bestScores[k - 1], bestPassages[k - 1])) continue;
      let at = full ? k - 1 : bestScores.length;
      while (at > 0 && beats(score, passage, bestScores[at - 1], bestPassages[at - 1])) {
        bestScores[at] = bestScores[at - 1];
        bestPassages[at] = bestPassages[at - 1];
        at--;
      }
      bestScores[at] = score;
      bestPassages[at] = passage;
    }
    return bestPassages.map((passage, i) => ({ passageId: this.passageIds[passage], score: bestScores[i] }));
  }
}

/**
 * Scores are summed in single precision: a bound is compared with a small margin so that rounding
 * never prunes a passage that belongs in the top k.
 */
const BOUND_MARGIN = 1e-4;

/**
 * The k-th highest accumulated score among the touched passages (k ≤ count). Scores only, unlike
 * `best`: a threshold needs no tie order, and skipping ties at once keeps this cheap when thousands
 * of passages score the same (sharing `best`'s tie-ordered insertion doubled the p99 at 1 M).
 */
function kthBest(accumulator: Float32Array, touched: Int32Array, count: number, k: number): number {
  const best: number[] = [];
  for (let i = 0; i < count; i++) {
    const score = accumulator[touched[i]];
    if (best.length === k && score <= best[k - 1]) continue;
    let at = best.length === k ? k - 1 : best.length;
    while (at > 0 && score > best[at - 1]) {
      best[at] = best[at - 1];
      at--;
    }
    best[at] = score;
  }
  return best[k - 1];
}

/**
 * The first position in the sorted postings [from, end) whose passage is at least `target`, by
 * galloping search over the 24-bit positions.
 */
function gallop(lows: Uint16Array, highs: Uint8Array, from: number, end: number, target: number): number {
  const at = (i: number) => lows[i] | (highs[i] << 16);
  if (from >= end || at(from) >= target) return from;
  let step = 1;
  let low = from;
  let high = from + 1;
  while (high < end && at(high) < target) {
    low = high;
    step *= 2;
    high = from + step;
  }
  if (high > end) high = end;
  // at(low) < target; at(high) >= target or high === end.
  while (low + 1 < high) {
    const middle = (low + high) >>> 1;
    if (at(middle) < target) low = middle;
    else high = middle;
  }
  return high;
}

function beats(score: number, passage: number, otherScore: number, otherPassage: number): boolean {
  return score > otherScore || (score === otherScore && passage < otherPassage);
}

function sourceBit(source: string): number {
  const at = SOURCES.indexOf(source as Source);
  return at < 0 ? 0 : 1 << at;
}
