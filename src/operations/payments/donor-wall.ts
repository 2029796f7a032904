import { Type } from '@sinclair/typebox';
import { donorWall } from '../../domain/payments/donor-wall.ts';
import { answerOf } from '../../http/serialized-answers.ts';
import { strictObject } from '../schemas.ts';
import { defineOperation } from '../types.ts';

const Input = strictObject({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, description: '1 to 50 (default 10).' })),
});

const Output = Type.Object({
  ok: Type.Boolean(),
  total_usd: Type.Number(),
  donor_count: Type.Integer(),
  recent: Type.Array(
    Type.Object({
      name: Type.String(),
      amount_usd: Type.Number(),
      message: Type.Union([Type.String(), Type.Null()]),
      at: Type.String({ format: 'date-time' }),
    }),
  ),
});

export const getDonorWall = defineOperation<typeof Input.static, typeof Output.static>({
  id: 'getDonorWall',
  method: 'GET',
  path: '/api/payments/donations',
  aliases: ['/api/floor10/donations'],
  tag: 'payments',
  summary: 'The donor wall',
  description:
    'Total raised, number of donors and the most recent donors who chose to be shown. Read-only and public.',
  mcpTool: 'ic_donations_total',
  credential: 'public',
  sandbox: 'real',
  idempotent: false,
  batchable: true,
  inputFrom: 'query',
  input: Input,
  output: Output,
  successStatus: 200,
  errors: [{ status: 400, description: 'limit out of range' }],
  async handler({ input, deps }) {
    const wall = await donorWall(deps, input.limit ?? 10);
    // The wall is reused for a moment per instance (the same object): so is its answer.
    return answerOf(wall, () => ({
      ok: true as const,
      total_usd: wall.total_usd,
      donor_count: wall.donor_count,
      recent: wall.recent,
    }));
  },
});
