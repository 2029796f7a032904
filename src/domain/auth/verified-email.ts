import { members } from '../../storage/members.ts';
import type { Executor } from '../../storage/schema.ts';
import type { Tiered } from '../access/tiers.ts';
import { createMember } from '../members/members.ts';
import type { Clocked, Configured } from '../ports.ts';
import { createSession } from './sessions.ts';

/**
 * The one place a verified email address becomes a signed-in member, whichever way it was verified
 * (a mailed link or an OpenID Connect provider): the member is looked up by address, created as a
 * member of the lowest tier on a first sign-in only while open sign-up is on, and given a session.
 * Returns the session id, or undefined when the address belongs to no member and sign-up is closed.
 * The email must already be normalized.
 */
export async function openSessionForVerifiedEmail(
  tx: Executor,
  deps: Clocked & Configured<'openSignup'> & Tiered,
  email: string,
): Promise<string | undefined> {
  let member = await members.byEmail(tx, email);
  if (!member) {
    if (!deps.config.openSignup) return undefined;
    member = await createMember(tx, deps.clock, deps.tiers, {
      email,
      name: email.split('@')[0],
      tier: deps.tiers.lowest,
    });
  }
  return createSession(tx, deps.clock, member.id);
}
