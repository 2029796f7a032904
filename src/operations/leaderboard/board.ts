import { Type } from '@sinclair/typebox';
import { iso } from '../../clock.ts';
import { currentBoard } from '../../domain/leaderboard/standings.ts';
import { strictObject } from '../schemas.ts';
import { defineOperation } from '../types.ts';

const Output = Type.Object({
  ok: Type.Literal(true),
  generated_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'When the refresh job last ran for this week; null before its first run.',
  }),
  week: Type.Object(
    { from: Type.String({ format: 'date-time' }), to: Type.String({ format: 'date-time' }) },
    { description: 'The ISO week: from Monday 00:00 UTC to the next Monday 00:00 UTC (exclusive).' },
  ),
  total: Type.Integer({ description: 'Members on the board (members may be cut by limit).' }),
  stale: Type.Boolean({
    description:
      'true when this week is not counted yet, the last run could not reach the host for every member (their previous counts are shown), or it is older than two refresh intervals.',
  }),
  members: Type.Array(
    Type.Object({
      rank: Type.Integer({ description: 'Competition ranking: equal counts share a rank.' }),
      handle: Type.String(),
      name: Type.String(),
      commits: Type.Integer(),
    }),
  ),
});

export const getLeaderboard = defineOperation<{ limit?: number }, typeof Output.static>({
  id: 'getLeaderboard',
  method: 'GET',
  path: '/api/leaderboard',
  tag: 'leaderboard',
  summary: 'Read this week’s commit leaderboard',
  description:
    'Opted-in members ranked by the commits they authored this ISO week, as counted through the code host by the refresh job.',
  mcpTool: 'ic_leaderboard_get_board',
  credential: 'public',
  sandbox: 'real',
  idempotent: false,
  inputFrom: 'query',
  input: strictObject({
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
  }),
  output: Output,
  successStatus: 200,
  errors: [{ status: 400, description: 'limit out of range' }],
  async handler({ input, deps }) {
    const board = await currentBoard(deps, input.limit ?? 100);
    return {
      body: {
        ok: true,
        generated_at: board.generatedAt === null ? null : iso(board.generatedAt),
        week: { from: iso(board.week.start), to: iso(board.week.end) },
        total: board.total,
        stale: board.stale,
        members: board.members,
      },
    };
  },
});
