import { Type } from '@sinclair/typebox';
import { iso } from '../../clock.ts';
import { viaOf } from '../../domain/auth/principal.ts';
import { linkOf } from '../../domain/leaderboard/links.ts';
import { standingOf } from '../../domain/leaderboard/standings.ts';
import { actingMemberId } from '../acting-member.ts';
import { strictObject, Via } from '../schemas.ts';
import { defineOperation } from '../types.ts';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T, description: string) =>
  Type.Union([schema, Type.Null()], { description });

const Output = Type.Object({
  ok: Type.Literal(true),
  optIn: Type.Boolean(),
  vcs_username: Nullable(Type.String(), 'The linked code-hosting username; null when none is linked.'),
  vcs_verified_at: Nullable(
    Type.String({ format: 'date-time' }),
    'When the host last confirmed the account (at linking).',
  ),
  vcs_link_source: Nullable(
    Type.Union([Type.Literal('oauth'), Type.Literal('token')]),
    'How the account was proven: the OAuth sign-in, or a personal access token checked once.',
  ),
  private_counting: Type.Boolean({
    description: 'Whether commits in private repositories count: false, since no member token is kept.',
  }),
  this_week: Nullable(
    Type.Object({
      count: Type.Integer({ description: 'Commits this ISO week (from Monday 00:00 UTC).' }),
      rank: Type.Integer(),
      total: Type.Integer({ description: 'Members on this week’s board.' }),
      generated_at: Type.String({ format: 'date-time' }),
    }),
    'The member’s place on this week’s board; null until the refresh job has ranked them.',
  ),
  via: Via,
});

export const getLeaderboardStatus = defineOperation<Record<string, never>, typeof Output.static>({
  id: 'getLeaderboardStatus',
  method: 'GET',
  path: '/api/leaderboard/me',
  tag: 'leaderboard',
  summary: 'Read the member’s leaderboard state',
  description:
    'The opt-in flag, the linked code-hosting account and, once ranked, this week’s count and rank.',
  mcpTool: 'ic_leaderboard_get_status',
  credential: 'bearer_or_session',
  scope: 'leaderboard:manage',
  sandbox: 'real',
  idempotent: false,
  inputFrom: 'query',
  input: strictObject({}),
  output: Output,
  successStatus: 200,
  errors: [
    { status: 401, description: 'No session and no valid token' },
    { status: 403, description: 'Token lacks leaderboard:manage, or the tier no longer grants it' },
  ],
  async handler(ctx) {
    const memberId = actingMemberId(ctx);
    const [link, standing] = await Promise.all([
      linkOf(ctx.deps.db, memberId),
      standingOf(ctx.deps, memberId),
    ]);
    return {
      body: {
        ok: true,
        optIn: Boolean(link && Number(link.opted_in)),
        vcs_username: link?.username ?? null,
        vcs_verified_at: link ? iso(Number(link.verified_at)) : null,
        vcs_link_source: link ? (link.source as 'oauth' | 'token') : null,
        private_counting: Boolean(link && Number(link.private_counting)),
        this_week: standing
          ? {
              count: standing.count,
              rank: standing.rank,
              total: standing.total,
              generated_at: iso(standing.generatedAt),
            }
          : null,
        via: viaOf(ctx.principal),
      },
    };
  },
});
