import { directory, MATCH_CANDIDATES } from '../../storage/directory.ts';
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

/** Where a directory page starts: after a name (the list of everyone) or at a rank (a search). */
export type DirectoryPosition = { name: string; id: string } | { offset: number };

/** The cursor naming a position (opaque to callers). */
export function encodeDirectoryCursor(position: DirectoryPosition): string {
  const value = 'offset' in position ? [position.offset] : [position.name, position.id];
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** The position a cursor names, or undefined when it is not one this directory gave out. */
export function decodeDirectoryCursor(cursor: string): DirectoryPosition | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (!Array.isArray(value)) return undefined;
    if (value.length === 1 && Number.isSafeInteger(value[0]) && value[0] > 0 && value[0] <= MATCH_CANDIDATES)
      return { offset: value[0] };
    const [name, id] = value;
    if (
      value.length === 2 &&
      typeof name === 'string' &&
      typeof id === 'string' &&
      name.length <= 400 &&
      id.length <= 200
    )
      return { name, id };
    return undefined;
  } catch {
    return undefined;
  }
}

/** One page of the directory and where the next one starts (undefined on the last). */
export interface DirectoryPage {
  entries: DirectoryEntry[];
  next: DirectoryPosition | undefined;
}

/**
 * Full-text search over listed members' name, handle, bio, skills and projects, best match first
 * (bm25 on the embedded engine, ts_rank on PostgreSQL), `limit` at a time: a search pages by rank
 * up to its first MATCH_CANDIDATES matches. Hidden members never appear. An empty query lists
 * everyone listed, by name, page after page. Undefined when `after` is not a position of this
 * kind of page (a search's cursor on the list, or the other way round).
 */
export async function searchDirectory(
  deps: Store,
  query: string,
  limit: number,
  access: FieldAccess,
  after?: DirectoryPosition,
): Promise<DirectoryPage | undefined> {
  const words = terms(query);
  let ids: string[];
  let next: DirectoryPosition | undefined;
  if (words.length === 0) {
    if (after && 'offset' in after) return undefined;
    const rows = await directory.listedByName(deps.db, limit + 1, after);
    const shown = rows.slice(0, limit);
    ids = shown.map((row) => row.id);
    const last = shown.at(-1);
    next = rows.length > limit && last ? { name: last.name, id: last.id } : undefined;
  } else {
    if (after && !('offset' in after)) return undefined;
    const offset = after?.offset ?? 0;
    const take = Math.min(limit, MATCH_CANDIDATES - offset);
    const found = take > 0 ? await directory.matching(deps.db, words, take + 1, offset) : [];
    ids = found.slice(0, take);
    const reached = offset + ids.length;
    next = found.length > take && reached < MATCH_CANDIDATES ? { offset: reached } : undefined;
  }
  if (ids.length === 0) return { entries: [], next: undefined };
  const rows = await directory.entries(deps.db, ids);
  const byId = new Map(rows.map((r) => [r.id, r]));
  const entries = ids.flatMap((id) => {
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
  return { entries, next };
}
