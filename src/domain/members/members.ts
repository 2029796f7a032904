import type { Clock } from '../../clock.ts';
import { randomId } from '../../secrets.ts';
import { members } from '../../storage/members.ts';
import { allRows, type Page, type PageRequest } from '../../storage/paging.ts';
import type { Executor, MembersTable } from '../../storage/schema.ts';
import type { TierLadder } from '../access/tiers.ts';
import { normalizeEmail } from './email-address.ts';

export type Member = MembersTable;

export interface NewMember {
  email: string;
  name: string;
  handle?: string;
  tier?: string;
}

export class MemberError extends Error {}

/** The one rule for every way an address comes in: the sign-in form, single sign-on, the CLI, the API. */
export { normalizeEmail } from './email-address.ts';

function handleFrom(name: string): string {
  return (
    name
      .toLowerCase()
      .normalize('NFKD')
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '')
      .slice(0, 40) || 'member'
  );
}

export async function createMember(
  db: Executor,
  clock: Clock,
  tiers: TierLadder,
  input: NewMember,
): Promise<Member> {
  const tier = input.tier ?? tiers.lowest;
  if (!tiers.has(tier)) throw new MemberError(`unknown tier "${tier}" (tiers: ${tiers.names().join(', ')})`);
  const email = normalizeEmail(input.email);
  if (!email) throw new MemberError(`"${input.email}" is not an email address`);
  const existing = await members.byEmail(db, email);
  if (existing) throw new MemberError(`a member with email ${email} already exists (${existing.id})`);
  const now = clock.now();
  const member: Member = {
    id: randomId('mem', 8),
    email,
    name: input.name.trim(),
    handle: input.handle ?? `${handleFrom(input.name)}-${randomId('', 4).slice(1)}`,
    tier,
    created_at: now,
    updated_at: now,
  };
  await members.add(db, member);
  return member;
}

export async function getMember(db: Executor, id: string): Promise<Member | undefined> {
  return members.byId(db, id);
}

/** Every member, oldest first (the CLI's list, read page by page). */
export async function listMembers(db: Executor): Promise<Member[]> {
  return allRows((page) => members.page(db, page));
}

/** One page of the members, oldest first. */
export function pageMembers(db: Executor, page: PageRequest): Promise<Page<Member>> {
  return members.page(db, page);
}

export async function setMemberTier(
  db: Executor,
  clock: Clock,
  tiers: TierLadder,
  id: string,
  tier: string,
): Promise<Member> {
  if (!tiers.has(tier)) throw new MemberError(`unknown tier "${tier}" (tiers: ${tiers.names().join(', ')})`);
  if (!(await members.setTier(db, id, tier, clock.now()))) throw new MemberError(`no member ${id}`);
  return (await getMember(db, id))!;
}
