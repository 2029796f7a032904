import { Type } from '@sinclair/typebox';
import { MODEL_CLASSES, type ModelClass } from '../../config.ts';
import { errors } from '../../core/errors.ts';
import type { RatePolicy } from '../../core/rate-limit.ts';
import { viaOf } from '../../domain/auth/principal.ts';
import { SOURCES, type Source } from '../../domain/research/document.ts';
import { ResearchResultSchema } from '../../domain/research/result.ts';
import { retrieve } from '../../domain/research/search.ts';
import { synthesize } from '../../domain/research/synthesis.ts';
import { strictObject } from '../schemas.ts';
import type { Deps } from '../services.ts';
import { defineOperation, refusedWith } from '../types.ts';

const DEFAULT_K = 10;

const Input = strictObject({
  q: Type.String({
    minLength: 1,
    maxLength: 500,
    description: 'The question or search words. Never logged or stored.',
  }),
  k: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 50, description: 'Passages to return, 1 to 50 (default 10).' }),
  ),
  sources: Type.Optional(
    Type.Array(Type.Union(SOURCES.map((s) => Type.Literal(s))), {
      minItems: 1,
      maxItems: SOURCES.length,
      uniqueItems: true,
      description: 'Which parts of the corpus to search (default ["paper"]).',
    }),
  ),
  synthesize: Type.Optional(
    Type.Boolean({
      description: 'Also compose an answer grounded only in the results, with numbered citations.',
    }),
  ),
  model: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 100,
      description:
        'Only with synthesize:true. small, medium or large, or the provider model identifier the operator mapped to one of them.',
    }),
  ),
});

const Citation = Type.Object({
  n: Type.Integer({ description: 'The number used in the answer, [n]: the n-th result.' }),
  id: Type.String({ description: 'The id of the cited result.' }),
  title: Type.String(),
  section: Type.String(),
  url: Type.Union([Type.String(), Type.Null()]),
});

const Via = Type.Union([Type.Literal('session'), Type.Literal('agent')], {
  description: 'Which credential path served the call, as on every operation: `session` or `agent`.',
});
const AnsweredBy = Type.String({
  description:
    'What produced the answer: `index` (retrieval only), `extractive` (the offline synthesizer, no language model), `openai` or `anthropic` (the configured provider).',
});

const Plain = Type.Object({ results: Type.Array(ResearchResultSchema), answered_by: AnsweredBy, via: Via });
const Synthesized = Type.Object({
  q: Type.String({ description: 'The question, echoed in this response only.' }),
  k: Type.Integer(),
  model: Type.String({ description: 'The model class that answered: small, medium or large.' }),
  answer: Type.String(),
  citations: Type.Array(Citation),
  results: Type.Array(ResearchResultSchema),
  usage: Type.Object({ input_tokens: Type.Integer(), output_tokens: Type.Integer() }),
  answered_by: AnsweredBy,
  via: Via,
});
const Output = Type.Union([Plain, Synthesized]);

type AskInput = typeof Input.static;

export function researchLimit(deps: Deps): RatePolicy {
  return { name: 'research', limit: deps.config.limits.researchPerHour, window: 3600, per: 'member' };
}

/** small, medium or large, given as such or as the provider identifier the operator mapped to it. */
function modelClassOf(deps: Deps, model: string): ModelClass {
  if ((MODEL_CLASSES as readonly string[]).includes(model)) return model as ModelClass;
  const mapped = MODEL_CLASSES.find((c) => deps.config.research.models[c] === model);
  if (mapped) return mapped;
  throw errors.validation(
    `model must be one of ${MODEL_CLASSES.join(', ')} or a configured model identifier`,
    {
      field: 'model',
    },
  );
}

export const researchAsk = defineOperation<AskInput, typeof Output.static>({
  id: 'researchAsk',
  method: 'POST',
  path: '/api/research/ask',
  tag: 'research',
  summary: 'Search the research corpus, optionally with a synthesized, cited answer',
  description:
    'BM25 retrieval over the corpus passages (papers by default), best first. With synthesize:true the answer is grounded only in the returned passages and cites them as [n] (the n-th result); with no language model configured an offline extractive synthesizer writes it (via: extractive). The question is never logged or stored. 60 per member per hour, shared by all the member’s tokens and sessions.',
  mcpTool: 'ic_research_ask',
  credential: 'bearer_or_session',
  scope: 'research:query',
  sandbox: 'real',
  // A question, sent as a POST for its size; with synthesize, a language-model provider answers it.
  effect: 'read',
  openWorld: true,
  idempotent: false,
  keepsResult: false,
  rateLimits: (deps) => [researchLimit(deps)],
  bodyLimit: 8 * 1024,
  inputFrom: 'body',
  input: Input,
  refineInput(input: AskInput): AskInput {
    if (input.model !== undefined && input.synthesize !== true)
      throw errors.validation('model is only valid with synthesize: true', { field: 'model' });
    return input;
  },
  output: Output,
  successStatus: 200,
  errors: [
    {
      status: 400,
      description:
        'Invalid body: q empty or over 500 characters, k outside 1..50, unknown source or model, model without synthesize',
    },
    { status: 401, description: 'Missing or invalid credential' },
    { status: 403, description: 'Token lacks research:query, or the tier no longer grants it' },
    { status: 413, description: 'Body larger than 8 KB' },
    { status: 429, description: 'More than 60 queries by this member in the hour' },
    refusedWith(['upstream_error'], 'The language model provider failed (synthesis only)'),
    refusedWith(['upstream_overloaded'], 'The language model provider is overloaded (synthesis only)'),
    refusedWith(['upstream_timeout'], 'The language model provider timed out (synthesis only)'),
  ],
  async handler({ input, deps, principal }) {
    const via = viaOf(principal);
    const k = input.k ?? DEFAULT_K;
    const sources: Source[] = input.sources ?? ['paper'];
    const { index, db } = await deps.corpus.searcher();
    const passages = retrieve(index, db, input.q, k, sources);
    const results = passages.map((p) => p.result);
    if (!input.synthesize) return { body: { results, answered_by: 'index', via } };
    const model = modelClassOf(deps, input.model ?? 'small');
    const synthesis = await synthesize(deps.config.research, input.q, model, passages);
    return {
      body: {
        q: input.q,
        k,
        model,
        answer: synthesis.answer,
        citations: synthesis.citations,
        results,
        usage: synthesis.usage,
        answered_by: synthesis.via,
        via,
      },
    };
  },
});
