import { Type } from '@sinclair/typebox';
import type { RatePolicy } from '../../core/rate-limit.ts';
import { viaOf } from '../../domain/auth/principal.ts';
import { setOptIn } from '../../domain/leaderboard/links.ts';
import { actingMemberId } from '../acting-member.ts';
import { strictObject, Via } from '../schemas.ts';
import type { Deps } from '../services.ts';
import { defineOperation, refusedWith } from '../types.ts';

const Input = strictObject({
  optIn: Type.Boolean({ description: 'true to appear on the weekly board, false to leave it.' }),
});

const Output = Type.Object({
  ok: Type.Literal(true),
  optIn: Type.Boolean(),
  vcs_username: Type.Union([Type.String(), Type.Null()], {
    description: 'The linked code-hosting username; null when no account is linked.',
  }),
  via: Via,
});

function optInLimit(deps: Deps): RatePolicy {
  return {
    name: 'leaderboard_optin',
    limit: deps.config.limits.leaderboardOptInPerHour,
    window: 3600,
    per: 'member',
  };
}

export const leaderboardOptIn = defineOperation<typeof Input.static, typeof Output.static>({
  id: 'leaderboardOptIn',
  method: 'POST',
  path: '/api/leaderboard/optin',
  tag: 'leaderboard',
  summary: 'Opt in to or out of the commit leaderboard',
  description:
    'Opting in needs a code-hosting account linked at /leaderboard/link (409 no_vcs_link otherwise); the member appears on the board at the next refresh. Opting out always works and takes the member off the board at once. Setting the flag it already has changes nothing.',
  mcpTool: 'ic_leaderboard_set_optin',
  credential: 'bearer_or_session',
  scope: 'leaderboard:manage',
  sandbox: 'simulated',
  // Sets the choice: setting it again to the same value changes nothing.
  repeatable: true,
  idempotent: false,
  rateLimits: (deps) => [optInLimit(deps)],
  bodyLimit: 8 * 1024,
  inputFrom: 'body',
  input: Input,
  output: Output,
  successStatus: 200,
  errors: [
    { status: 400, description: 'Invalid JSON, or optIn missing or not a boolean' },
    { status: 401, description: 'No session and no valid token' },
    { status: 403, description: 'Token lacks leaderboard:manage, or the tier no longer grants it' },
    refusedWith(['no_vcs_link'], 'Opting in without a linked code-hosting account (error_kind no_vcs_link)'),
    { status: 413, description: 'Body larger than 8 KB' },
    { status: 429, description: 'Too many changes this hour' },
  ],
  async handler(ctx) {
    const username = await setOptIn(ctx.deps, actingMemberId(ctx), ctx.input.optIn);
    return {
      body: { ok: true, optIn: ctx.input.optIn, vcs_username: username, via: viaOf(ctx.principal) },
    };
  },
});
