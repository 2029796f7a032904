import { directory } from '../../storage/directory.ts';
import { members } from '../../storage/members.ts';
import type { MemberProfilesTable } from '../../storage/schema.ts';
import { transact, type WritePort } from '../../storage/transactions.ts';
import type { Clocked, Store } from '../ports.ts';

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
  return toProfile(await directory.profileOf(deps.db, memberId));
}

/** Saves a profile and its full-text entry together; a hidden profile has no entry at all. */
export async function saveProfile(
  deps: Clocked & WritePort,
  memberId: string,
  profile: Profile,
): Promise<void> {
  const now = deps.clock.now();
  await transact(deps, async (trx) => {
    const member = await members.nameAndHandle(trx, memberId);
    const values = {
      bio: profile.bio.slice(0, PROFILE_LIMITS.bio),
      skills: profile.skills.slice(0, PROFILE_LIMITS.skills),
      projects: profile.projects.slice(0, PROFILE_LIMITS.projects),
      visibility: profile.visibility,
      show_email: profile.showEmail ? 1 : 0,
      updated_at: now,
    };
    await directory.saveProfile(trx, memberId, values);
    await directory.indexEntry(
      trx,
      memberId,
      {
        name: member.name,
        handle: member.handle,
        bio: values.bio,
        skills: values.skills,
        projects: values.projects,
      },
      profile.visibility !== 'hidden',
    );
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
  deps: Store,
  query: string,
  limit: number,
  access: FieldAccess,
): Promise<DirectoryEntry[]> {
  const words = terms(query);
  const ids =
    words.length === 0
      ? await directory.listedByName(deps.db, limit)
      : await directory.matching(deps.db, words, limit);
  if (ids.length === 0) return [];
  const rows = await directory.entries(deps.db, ids);
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
