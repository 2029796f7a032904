import { sql } from 'kysely';
import { rankCandidates } from './engine/bounded-bm25.ts';
import { onPostgres } from './engine/prepared.ts';
import type { Executor, MemberProfilesTable } from './schema.ts';

// The members' directory: their profiles (table member_profiles) and its full-text index (the
// embedded engine's directory_fts; on PostgreSQL the profile's search_text column).

/** How many of a search's matches an engine ranks at most (pages of a search end there). */
export const MATCH_CANDIDATES = 500;

/** A profile's columns but the member it belongs to. */
export type ProfileColumns = Omit<MemberProfilesTable, 'member_id'>;

/** What the full-text index holds of a member. */
export interface SearchEntry {
  name: string;
  handle: string;
  bio: string;
  skills: string;
  projects: string;
}

/**
 * The embedded engine's matching(). bm25() counts every row holding each word before it ranks any,
 * so the index is first asked, lazily, for up to `candidates` rows holding the words whole, then as
 * prefixes: where either fills the candidates (a common word) those are ranked by their own text
 * (engine/bounded-bm25.ts), bounded whatever the directory's size, and every whole-word holder is
 * among them; otherwise every match is ranked by bm25() as the index holds them, a bounded count.
 */
async function matchingEmbedded(
  executor: Executor,
  words: readonly string[],
  limit: number,
  offset: number,
  candidates: number,
): Promise<string[]> {
  // Each word quoted (no query syntax reaches the engine), whole or as a prefix.
  const matchOf = (prefix: boolean) => words.map((w) => `"${w}"${prefix ? '*' : ''}`).join(' ');
  const candidatesMatching = async (prefix: boolean) => {
    const match = matchOf(prefix);
    const found = await sql<{
      member_id: string;
      name: string;
      bio: string;
      skills: string;
      projects: string;
    }>`select member_id, name, bio, skills, projects from directory_fts where directory_fts match ${match} limit ${candidates}`.execute(
      executor,
    );
    return found.rows.map((row) => ({
      id: row.member_id,
      columns: [row.name, row.bio, row.skills, row.projects],
    }));
  };
  const whole = await candidatesMatching(false);
  if (whole.length >= candidates) return rankCandidates(whole, words, false).slice(offset, offset + limit);
  const byPrefix = await candidatesMatching(true);
  if (byPrefix.length >= candidates) {
    // Every whole-word holder stays a candidate; prefix holders fill the rest.
    const ids = new Set(whole.map((candidate) => candidate.id));
    const filled = [...whole, ...byPrefix.filter((candidate) => !ids.has(candidate.id))].slice(0, candidates);
    return rankCandidates(filled, words, true).slice(offset, offset + limit);
  }
  const rows = await sql<{
    member_id: string;
  }>`select member_id from (select member_id, bm25(directory_fts) as score from directory_fts where directory_fts match ${matchOf(true)}) order by score, member_id limit ${limit} offset ${offset}`.execute(
    executor,
  );
  return rows.rows.map((row) => row.member_id);
}

export const directory = {
  profileOf(executor: Executor, memberId: string): Promise<MemberProfilesTable | undefined> {
    return executor
      .selectFrom('member_profiles')
      .selectAll()
      .where('member_id', '=', memberId)
      .executeTakeFirst();
  },

  /** Writes a member's profile, replacing the one they had. */
  async saveProfile(executor: Executor, memberId: string, columns: ProfileColumns): Promise<void> {
    await executor
      .insertInto('member_profiles')
      .values({ member_id: memberId, ...columns })
      .onConflict((oc) => oc.column('member_id').doUpdateSet(columns))
      .execute();
  },

  /**
   * Writes a member's full-text entry after their profile was saved. On the embedded engine an
   * entry exists only while `listed`; PostgreSQL keeps the text on the profile row, which the search
   * reads only for listed profiles.
   */
  async indexEntry(executor: Executor, memberId: string, entry: SearchEntry, listed: boolean): Promise<void> {
    if (onPostgres(executor)) {
      const searchText = [entry.name, entry.handle, entry.bio, entry.skills, entry.projects].join(' ');
      await sql`update member_profiles set search_text = ${searchText} where member_id = ${memberId}`.execute(
        executor,
      );
      return;
    }
    await sql`delete from directory_fts where member_id = ${memberId}`.execute(executor);
    if (listed)
      await sql`insert into directory_fts (member_id, name, bio, skills, projects) values (${memberId}, ${`${entry.name} ${entry.handle}`}, ${entry.bio}, ${entry.skills}, ${entry.projects})`.execute(
        executor,
      );
  },

  /**
   * One page of the listed members' ids, by name then id, after `after` (the last of the page
   * before): the members walked in the order of the index (name, id), each joined to its profile.
   */
  async listedByName(
    executor: Executor,
    limit: number,
    after?: { name: string; id: string },
  ): Promise<{ id: string; name: string }[]> {
    return directory.listedQuery(executor, limit, after).execute();
  },

  /** The statement listedByName() runs (tests read its plan). */
  listedQuery(executor: Executor, limit: number, after?: { name: string; id: string }) {
    // A CROSS JOIN: the embedded engine then keeps members as the outer loop, walked in the order of
    // members_name, rather than scanning the profiles and sorting (PostgreSQL plans it as a join).
    let query = executor
      .selectFrom('members')
      .crossJoin('member_profiles')
      .whereRef('member_profiles.member_id', '=', 'members.id')
      .select(['members.id', 'members.name'])
      .where('member_profiles.visibility', '=', 'members');
    if (after)
      query = query.where((eb) =>
        eb.or([
          eb('members.name', '>', after.name),
          eb.and([eb('members.name', '=', after.name), eb('members.id', '>', after.id)]),
        ]),
      );
    return query.orderBy('members.name').orderBy('members.id').limit(limit);
  },

  /**
   * The ids of members whose entry holds every word as a prefix, best match first (bm25 on the
   * embedded engine, ts_rank on PostgreSQL; ties by id), `limit` of them from the `offset`th. The
   * words are letters and digits only: the caller drops everything else. Each engine ranks only the
   * first `candidates` matches its full-text index finds (the embedded engine: holding the words
   * whole, if that many do), so a common word costs a bounded ranking; with fewer matches than that
   * (a typical query) the answer is what ranking every match gives.
   */
  async matching(
    executor: Executor,
    words: readonly string[],
    limit: number,
    offset = 0,
    candidates = MATCH_CANDIDATES,
  ): Promise<string[]> {
    if (!onPostgres(executor)) return matchingEmbedded(executor, words, limit, offset, candidates);
    const rows = await directory.matchingOnPostgres(words, limit, offset, candidates).execute(executor);
    return rows.rows.map((row) => row.member_id);
  },

  /** PostgreSQL's statement for matching() (tests read its plan). */
  matchingOnPostgres(words: readonly string[], limit: number, offset: number, candidates: number) {
    const tsquery = words.map((w) => `${w}:*`).join(' & ');
    return sql<{
      member_id: string;
    }>`select member_id from (select member_id, search_text from member_profiles where visibility = 'members' and to_tsvector('simple', search_text) @@ to_tsquery('simple', ${tsquery}) limit ${candidates}) as candidates order by ts_rank(to_tsvector('simple', search_text), to_tsquery('simple', ${tsquery})) desc, member_id limit ${limit} offset ${offset}`;
  },

  /** What the directory shows of these members (in no particular order), with their visibility. */
  entries(executor: Executor, ids: readonly string[]) {
    return executor
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
  },
};
