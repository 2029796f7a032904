import { type Static, Type } from '@sinclair/typebox';

/** One retrieved passage as the wire carries it: declared once, for the domain and the operation's output schema. */
export const ResearchResultSchema = Type.Object({
  id: Type.String({ description: '`<document id>#<passage position>`; citations point at it.' }),
  title: Type.String(),
  source: Type.String(),
  authors: Type.String(),
  year: Type.Union([Type.Integer(), Type.Null()]),
  url: Type.Union([Type.String(), Type.Null()]),
  section: Type.String(),
  snippet: Type.String({ description: 'The best-matching stretch, query words wrapped in <mark>…</mark>.' }),
  score: Type.Number({ description: 'BM25 relevance, higher is better; comparable within one answer only.' }),
});

export type ResearchResult = Static<typeof ResearchResultSchema>;
