import { Type } from '@sinclair/typebox';
import { iso } from '../../clock.ts';
import { errors } from '../../core/errors.ts';
import { listApprovedHighlights } from '../../domain/highlights/approved.ts';
import { decodeCursor, encodeCursor } from '../../storage/paging.ts';
import { strictObject } from '../schemas.ts';
import { defineOperation } from '../types.ts';

const DEFAULT_LIMIT = 20;

const Input = strictObject({
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 50, description: `1 to 50 (default ${DEFAULT_LIMIT}).` }),
  ),
  cursor: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 300,
      description: 'next_cursor of the previous page; omit for the first page.',
    }),
  ),
});

const Output = Type.Object({
  ok: Type.Literal(true),
  count: Type.Integer({ description: 'Stories on this page.' }),
  highlights: Type.Array(
    Type.Object({
      id: Type.String(),
      story: Type.Object({}, { additionalProperties: true, description: 'The story as it was submitted.' }),
      submitted_at: Type.String({ format: 'date-time' }),
      approved_at: Type.String({ format: 'date-time' }),
    }),
  ),
  next_cursor: Type.Union([Type.String(), Type.Null()], {
    description: 'Pass as cursor for the next page; null on the last page.',
  }),
});

export const listApprovedHighlightsOperation = defineOperation<typeof Input.static, typeof Output.static>({
  id: 'listApprovedHighlights',
  method: 'GET',
  path: '/api/highlights',
  tag: 'highlights',
  summary: 'Read the approved event highlights',
  description:
    'Public. The stories operators approved, most recently approved first, each as it was submitted; pending, rejected and expired stories are never listed. Paged with next_cursor.',
  mcpTool: 'ic_highlights_list',
  credential: 'public',
  sandbox: 'real',
  idempotent: false,
  inputFrom: 'query',
  input: Input,
  output: Output,
  successStatus: 200,
  errors: [{ status: 400, description: 'limit out of range, or a cursor this list did not give out' }],
  async handler({ deps, input }) {
    const after = input.cursor === undefined ? undefined : decodeCursor(input.cursor);
    if (input.cursor !== undefined && !after)
      throw errors.validation('cursor is not a next_cursor this list gave out', { field: 'cursor' });
    const page = await listApprovedHighlights(deps, { limit: input.limit ?? DEFAULT_LIMIT, after });
    const highlights = page.rows.map((row) => ({
      id: row.id,
      story: row.story,
      submitted_at: iso(row.submittedAt),
      approved_at: iso(row.approvedAt),
    }));
    return {
      body: {
        ok: true as const,
        count: highlights.length,
        highlights,
        next_cursor: page.next ? encodeCursor(page.next) : null,
      },
    };
  },
});
