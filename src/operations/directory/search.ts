import { Type } from '@sinclair/typebox';
import { errors } from '../../core/errors.ts';
import {
  decodeDirectoryCursor,
  encodeDirectoryCursor,
  searchDirectory,
} from '../../domain/members/directory.ts';
import { MATCH_CANDIDATES } from '../../storage/directory.ts';
import { strictObject } from '../schemas.ts';
import type { Deps } from '../services.ts';
import { defineOperation } from '../types.ts';

const Input = strictObject({
  q: Type.Optional(
    Type.String({ maxLength: 200, description: 'Words to look for; empty lists every listed member.' }),
  ),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, description: '1 to 50 (default 20).' })),
  cursor: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 1000,
      description: 'next_cursor of the previous page, with the same q; omit for the first page.',
    }),
  ),
});

const Entry = Type.Object({
  handle: Type.String(),
  name: Type.String(),
  bio: Type.String(),
  skills: Type.String(),
  projects: Type.String(),
  email: Type.Optional(
    Type.String({ description: 'Only when the member shows it and the caller’s tier is core or above.' }),
  ),
  tier: Type.Optional(Type.String({ description: 'Only for operators.' })),
});

const Output = Type.Object({
  ok: Type.Boolean(),
  results: Type.Array(Entry),
  count: Type.Integer(),
  query: Type.String(),
  next_cursor: Type.Union([Type.String(), Type.Null()], {
    description: 'Pass as cursor (with the same q) for the next page; null on the last page.',
  }),
});

/** Callers at or above this tier see the email of members who chose to show it. */
const EMAIL_TIER = 'core';

function atOrAbove(deps: Deps, tier: string, floor: string): boolean {
  return deps.tiers.has(floor) && (tier === floor || deps.tiers.isAbove(tier, floor));
}

export const searchMemberDirectory = defineOperation<typeof Input.static, typeof Output.static>({
  id: 'searchDirectory',
  method: 'GET',
  path: '/api/directory/search',
  tag: 'directory',
  summary: 'Search the member directory',
  description: `Full-text search over the profiles members chose to list (name, handle, bio, skills, projects), best match first (an empty q lists them by name). Paged with next_cursor: a search pages through its best ${MATCH_CANDIDATES} matches. Hidden members never appear. Callers on tier core or above also see the email of members who show it; operators also see each member’s tier.`,
  mcpTool: 'ic_directory_search',
  credential: 'bearer',
  scope: 'directory:search',
  sandbox: 'real',
  idempotent: false,
  inputFrom: 'query',
  input: Input,
  output: Output,
  successStatus: 200,
  errors: [
    { status: 400, description: 'q too long, limit out of range, or a cursor this search did not give out' },
    { status: 401, description: 'Missing or invalid token' },
    { status: 403, description: 'Token lacks directory:search, or the tier no longer grants it' },
  ],
  async handler({ input, principal, deps }) {
    const tier = principal.member.tier;
    const after = input.cursor === undefined ? undefined : decodeDirectoryCursor(input.cursor);
    const page =
      input.cursor !== undefined && !after
        ? undefined
        : await searchDirectory(
            deps,
            input.q ?? '',
            input.limit ?? 20,
            { email: atOrAbove(deps, tier, EMAIL_TIER), tier: deps.tiers.grants(tier, 'admin:tier_review') },
            after,
          );
    if (!page)
      throw errors.validation('cursor is not a next_cursor this search gave out', { field: 'cursor' });
    const results = page.entries;
    return {
      body: {
        ok: true,
        results,
        count: results.length,
        query: input.q ?? '',
        next_cursor: page.next ? encodeDirectoryCursor(page.next) : null,
      },
    };
  },
});
