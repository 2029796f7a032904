import type { Clock } from '../../clock.ts';
import { randomId } from '../../secrets.ts';
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
  const existing = await db.selectFrom('members').select('id').where('email', '=', email).executeTakeFirst();
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
  await db.insertInto('members').values(member).execute();
  return member;
}

export async function getMember(db: Executor, id: string): Promise<Member | undefined> {
  return db.selectFrom('members').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listMembers(db: Executor): Promise<Member[]> {
  return db.selectFrom('members').selectAll().orderBy('created_at').orderBy('id').execute();
}

export async function setMemberTier(
  db: Executor,
  clock: Clock,
  tiers: TierLadder,
  id: string,
  tier: string,
): Promise<Member> {
  if (!tiers.has(tier)) throw new MemberError(`unknown tier "${tier}" (tiers: ${tiers.names().join(', ')})`);
  const result = await db
    .updateTable('members')
    .set({ tier, updated_at: clock.now() })
    .where('id', '=', id)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) throw new MemberError(`no member ${id}`);
  return (await getMember(db, id))!;
}
