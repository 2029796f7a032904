import { sql } from 'kysely';
import type { MemberProfilesTable } from '../../storage/schema.ts';
import { transact, type WritePort } from '../../storage/transactions.ts';
import type { Clocked, OnDatabase, Store } from '../ports.ts';

export type Visibility = 'hidden' | 'members';

export interface Profile {
  bio: string;
  skills: string;
  projects: string;
  visibility: Visibility;
  showEmail: boolean;
}

/** A member without a saved profile is hidden: nobody is listed until they choose to be. */
export const DEFAULT_PROFILE: Profile = {
  bio: '',
  skills: '',
  projects: '',
  visibility: 'hidden',
  showEmail: false,
};

export const PROFILE_LIMITS = { bio: 1000, skills: 300, projects: 600 } as const;

function toProfile(row: MemberProfilesTable | undefined): Profile {
  if (!row) return DEFAULT_PROFILE;
  return {
    bio: row.bio,
    skills: row.skills,
    projects: row.projects,
    visibility: row.visibility === 'members' ? 'members' : 'hidden',
    showEmail: Number(row.show_email) === 1,
  };
}

export async function getProfile(deps: Store, memberId: string): Promise<Profile> {
  return toProfile(
    await deps.db
      .selectFrom('member_profiles')
      .selectAll()
      .where('member_id', '=', memberId)
      .executeTakeFirst(),
  );
}

/** Saves a profile and its full-text entry together; a hidden profile has no entry at all. */
export async function saveProfile(
  deps: Clocked & OnDatabase & WritePort,
  memberId: string,
  profile: Profile,
): Promise<void> {
  const now = deps.clock.now();
  await transact(deps, async (trx) => {
    const member = await trx
      .selectFrom('members')
      .select(['name', 'handle'])
      .where('id', '=', memberId)
      .executeTakeFirstOrThrow();
    const values = {
      bio: profile.bio.slice(0, PROFILE_LIMITS.bio),
      skills: profile.skills.slice(0, PROFILE_LIMITS.skills),
      projects: profile.projects.slice(0, PROFILE_LIMITS.projects),
      visibility: profile.visibility,
      show_email: profile.showEmail ? 1 : 0,
      updated_at: now,
    };
    await trx
      .insertInto('member_profiles')
      .values({ member_id: memberId, ...values })
      .onConflict((oc) => oc.column('member_id').doUpdateSet(values))
      .execute();
    const searchText = [member.name, member.handle, values.bio, values.skills, values.projects].join(' ');
    if (deps.database.engine === 'sqlite') {
      await sql`delete from directory_fts where member_id = ${memberId}`.execute(trx);
      if (profile.visibility !== 'hidden')
        await sql`insert into directory_fts (member_id, name, bio, skills, projects) values (${memberId}, ${`${member.name} ${member.handle}`}, ${values.bio}, ${values.skills}, ${values.projects})`.execute(
          trx,
        );
    } else {
      await sql`update member_profiles set search_text = ${searchText} where member_id = ${memberId}`.execute(
        trx,
      );
    }
  });
}

export interface DirectoryEntry {
  handle: string;
  name: string;
  bio: string;
  skills: string;
  projects: string;
  email?: string;
  tier?: string;
}

/** Which fields a caller sees beyond the public profile: set by the caller's tier (docs/directory.md). */
export interface FieldAccess {
  email: boolean;
  tier: boolean;
}

/** Words of the query as prefix terms; everything else in it is dropped (no query syntax reaches the engine). */
function terms(query: string): string[] {
  return (query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).slice(0, 8);
}

/**
 * Full-text search over listed members' name, handle, bio, skills and projects, best match first
 * (bm25 on the embedded engine, ts_rank on PostgreSQL). Hidden members never appear. An empty query
 * lists everyone listed, by name.
 */
export async function searchDirectory(
  deps: Store & OnDatabase,
  query: string,
  limit: number,
  access: FieldAccess,
): Promise<DirectoryEntry[]> {
  const words = terms(query);
  let ids: string[];
  if (words.length === 0) {
    const rows = await deps.db
      .selectFrom('member_profiles')
      .innerJoin('members', 'members.id', 'member_profiles.member_id')
      .select('members.id')
      .where('member_profiles.visibility', '=', 'members')
      .orderBy('members.name')
      .limit(limit)
      .execute();
    ids = rows.map((r) => r.id);
  } else if (deps.database.engine === 'sqlite') {
    const match = words.map((w) => `"${w}"*`).join(' ');
    const rows = await sql<{
      member_id: string;
    }>`select member_id from directory_fts where directory_fts match ${match} order by bm25(directory_fts) limit ${limit}`.execute(
      deps.db,
    );
    ids = rows.rows.map((r) => r.member_id);
  } else {
    const tsquery = words.map((w) => `${w}:*`).join(' & ');
    const rows = await sql<{
      member_id: string;
    }>`select member_id from member_profiles where visibility = 'members' and to_tsvector('simple', search_text) @@ to_tsquery('simple', ${tsquery}) order by ts_rank(to_tsvector('simple', search_text), to_tsquery('simple', ${tsquery})) desc, member_id limit ${limit}`.execute(
      deps.db,
    );
    ids = rows.rows.map((r) => r.member_id);
  }
  if (ids.length === 0) return [];
  const rows = await deps.db
    .selectFrom('member_profiles')
    .innerJoin('members', 'members.id', 'member_profiles.member_id')
    .select([
      'members.id',
      'members.handle',
      'members.name',
      'members.email',
      'members.tier',
      'member_profiles.bio',
      'member_profiles.skills',
      'member_profiles.projects',
      'member_profiles.show_email',
      'member_profiles.visibility',
    ])
    .where('members.id', 'in', ids)
    .execute();
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.flatMap((id) => {
    const row = byId.get(id);
    // Re-checked here: the index entry and the visibility flag are written together, but a reader
    // must never show a hidden member even if they were not.
    if (row?.visibility !== 'members') return [];
    const entry: DirectoryEntry = {
      handle: row.handle,
      name: row.name,
      bio: row.bio,
      skills: row.skills,
      projects: row.projects,
    };
    if (access.email && Number(row.show_email) === 1) entry.email = row.email;
    if (access.tier) entry.tier = row.tier;
    return [entry];
  });
}
