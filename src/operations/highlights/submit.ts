import { Type } from '@sinclair/typebox';
import { iso } from '../../clock.ts';
import { type ApiError, apiError } from '../../core/errors.ts';
import { rateInfo } from '../../core/rate-limit.ts';
import { highlightQuota, submitHighlight as submit } from '../../domain/highlights/highlights.ts';
import { validateInput } from '../pipeline/validate.ts';
import { RateInfoSchema } from '../schemas.ts';
import { defineOperation, refusedWith } from '../types.ts';
import { HighlightPendingRequest, HighlightStorySchema } from './story.ts';

export const HIGHLIGHT_BODY_LIMIT = 256 * 1024;

const Output = Type.Object({
  ok: Type.Boolean(),
  id: Type.String(),
  status: Type.Literal('pending'),
  job_id: Type.String({ description: 'Equals id. Handle for polling.' }),
  poll_url: Type.String({ description: 'Same URL as the Location header.' }),
  rate: RateInfoSchema,
  expires_at: Type.String({ format: 'date-time' }),
});

function storyOf(input: Record<string, unknown>): Record<string, unknown> & { id: string } {
  const wrapped = input.story;
  const story =
    wrapped && typeof wrapped === 'object' && !Array.isArray(wrapped) ? { ...wrapped } : { ...input };
  if (wrapped && (story as { id?: unknown }).id === undefined && input.id !== undefined) {
    (story as { id?: unknown }).id = input.id;
  }
  try {
    return validateInput(HighlightStorySchema, story, false);
  } catch (error) {
    const problem = error as ApiError;
    throw apiError('invalid_story', { message: problem.message, extra: problem.options.extra });
  }
}

export const submitHighlight = defineOperation<
  Record<string, unknown> & { id: string },
  typeof Output.static
>({
  id: 'submitHighlight',
  // The story's id is the submitter's own (its input), so the activity row the write's transaction
  // inserts already names it: no correction after the answer on this, the busiest write.
  touches: (input: { id?: unknown }) => (typeof input.id === 'string' ? `highlight:${input.id}` : undefined),
  method: 'POST',
  path: '/api/ingest/highlights/pending',
  tag: 'highlights',
  summary: 'Submit an event highlight for moderation',
  description:
    'Queues a story for operator moderation and answers 202 with Location (the poll URL). Resubmitting a pending id refreshes it without spending the daily quota (3 new stories per token per UTC day).',
  mcpTool: 'ic_highlights_submit',
  credential: 'bearer',
  scope: 'events:submit_recap',
  sandbox: 'simulated',
  idempotent: true,
  quotas: (deps) => [highlightQuota(deps)],
  bodyLimit: HIGHLIGHT_BODY_LIMIT,
  inputFrom: 'body',
  input: HighlightPendingRequest,
  output: Output,
  successStatus: 202,
  errors: [
    { status: 400, description: 'Invalid JSON or story validation error' },
    { status: 401, description: 'Missing or invalid token' },
    { status: 403, description: 'Token lacks events:submit_recap, or the tier no longer grants it' },
    refusedWith(
      ['story_id_taken', 'already_moderated'],
      'The story id belongs to another member, or was already moderated',
    ),
    { status: 413, description: 'Body larger than 256 KB' },
    { status: 429, description: 'Per-token daily limit reached' },
    { status: 500, description: 'Enqueue failed' },
  ],
  refineInput: storyOf,
  async handler({ input: story, principal, deps }) {
    const result = await submit(deps, { story, memberId: principal.member.id, tokenId: principal.token.id });
    const pollUrl = `${deps.config.publicUrl}/api/ingest/highlights/pending?id=${encodeURIComponent(result.id)}`;
    return {
      status: 202,
      headers: { location: pollUrl },
      rate: [result.rate],
      body: {
        ok: true,
        id: result.id,
        status: 'pending',
        job_id: result.id,
        poll_url: pollUrl,
        rate: rateInfo(result.rate),
        expires_at: iso(result.expiresAt),
      },
    };
  },
});
