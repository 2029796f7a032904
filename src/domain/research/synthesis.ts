import type { ModelClass, ResearchConfig } from '../../config.ts';
import { composeExtractiveAnswer } from './extractive.ts';
import { callProvider, type Usage } from './providers.ts';

import type { RetrievedPassage } from './search.ts';

export interface Citation {
  /** The number the answer uses, `[n]`: the n-th result. */
  n: number;
  /** The id of the result it points at. */
  id: string;
  title: string;
  section: string;
  url: string | null;
}

export interface Synthesis {
  answer: string;
  citations: Citation[];
  usage: Usage;
  /** Which synthesizer wrote the answer: `extractive`, `openai` or `anthropic`. */
  via: string;
}

/** The numbered passages a model is given; `[n]` in its answer refers to passage n. */
export function numberedPassages(passages: RetrievedPassage[]): string {
  return passages
    .map(({ result, text }, i) => {
      const where = [result.title, result.section].filter(Boolean).join(' — ');
      return `[${i + 1}] ${where}\n${text}`;
    })
    .join('\n\n');
}

/** The citations an answer really makes: only numbers of passages it was given, in order of first use. */
export function citationsIn(answer: string, passages: RetrievedPassage[]): Citation[] {
  const seen = new Set<number>();
  for (const match of answer.matchAll(/\[(\d{1,2})\]/g)) {
    const n = Number(match[1]);
    if (n >= 1 && n <= passages.length) seen.add(n);
  }
  return [...seen].map((n) => {
    const { result } = passages[n - 1];
    return { n, id: result.id, title: result.title, section: result.section, url: result.url };
  });
}

/**
 * An answer grounded only in the retrieved passages: from the configured provider, or, with none,
 * composed offline from the passages' own sentences.
 */
export async function synthesize(
  config: ResearchConfig,
  query: string,
  modelClass: ModelClass,
  passages: RetrievedPassage[],
): Promise<Synthesis> {
  if (config.provider === 'none' || passages.length === 0) {
    const answer = composeExtractiveAnswer(query, passages);
    return {
      answer,
      citations: citationsIn(answer, passages),
      usage: { input_tokens: 0, output_tokens: 0 },
      via: 'extractive',
    };
  }
  const reply = await callProvider(config, config.models[modelClass], query, numberedPassages(passages));
  return {
    answer: reply.text,
    citations: citationsIn(reply.text, passages),
    usage: reply.usage,
    via: config.provider,
  };
}
