import { Type } from '@sinclair/typebox';
import { apiError } from '../../core/errors.ts';
import { countPending, highlightStatus as statusOf } from '../../domain/highlights/highlights.ts';
import { strictObject } from '../schemas.ts';
import { defineOperation, refusedWith } from '../types.ts';

const Output = Type.Union([
  Type.Object({ status: Type.Union([Type.Literal('pending'), Type.Literal('gone')]), id: Type.String() }),
  Type.Object({
    ok: Type.Literal(true),
    count: Type.Integer({ description: "The caller's pending stories." }),
  }),
]);

export const highlightStatus = defineOperation<{ id?: string }, unknown>({
  id: 'getHighlightStatus',
  touches: (input: { id?: string }) => (input.id ? `highlight:${input.id}` : undefined),
  method: 'GET',
  path: '/api/ingest/highlights/pending',
  tag: 'highlights',
  summary: 'Poll a highlight submission',
  description:
    'With ?id=<job_id>: {status: pending} while queued, {status: gone} once out of the queue (approved, rejected or expired; the poll cannot tell which). Without id: {ok, count} of the caller’s pending stories, which also works as an auth check.',
  mcpTool: 'ic_highlights_status',
  credential: 'bearer',
  sandbox: 'real',
  idempotent: false,
  inputFrom: 'query',
  input: strictObject({ id: Type.Optional(Type.String({ minLength: 1, maxLength: 160 })) }),
  output: Output,
  successStatus: 200,
  errors: [
    { status: 401, description: 'Missing or invalid token' },
    refusedWith(['unknown_story'], 'No story with this id was submitted by the member'),
  ],
  async handler({ input, principal, deps }) {
    if (input.id === undefined)
      return { body: { ok: true, count: await countPending(deps, principal.member.id) } };
    const status = await statusOf(deps, principal.member.id, input.id);
    if (!status) throw apiError('unknown_story');
    return { body: { status, id: input.id } };
  },
});
