import { MS } from '../../clock.ts';
import { peekQuota, takeQuota } from '../../core/quota.ts';
import type { RatePolicy } from '../../core/rate-limit.ts';
import { randomId } from '../../secrets.ts';
import { rsvps } from '../../storage/rsvps.ts';
import { transact, type WritePort } from '../../storage/transactions.ts';
import type { Clocked, Configured, Store } from '../ports.ts';
import type { QueuedWrite } from '../queue/queued-write.ts';

/** A second RSVP of the same member to the same event within this window is recognised as a duplicate. */
export const RSVP_DEDUPE_MS = 7 * MS.day;

export function rsvpQuota(deps: Configured<'limits'>): RatePolicy {
  return { name: 'rsvps', limit: deps.config.limits.rsvpsPerDay, window: 'utc_day', per: 'token' };
}

export interface RsvpRequest {
  eventUrl: string;
  memberId: string;
  /** Absent for a browser session (a member's own page): the quota is then counted per member. */
  tokenId: string | null;
  email: string | null;
  name: string | null;
}

/** Queues an RSVP for delivery to the event platform; a repeat within the window is a no-op. */
export async function queueRsvp(
  deps: Clocked & Configured<'limits'> & WritePort,
  request: RsvpRequest,
): Promise<QueuedWrite> {
  const now = deps.clock.now();
  const policy = rsvpQuota(deps);
  const subject = request.tokenId ?? `member:${request.memberId}`;
  return transact(deps, async (trx) => {
    const earlier = await rsvps.latestLive(trx, request.memberId, request.eventUrl, now - RSVP_DEDUPE_MS);
    if (earlier) return { id: earlier, wasDup: true, rate: await peekQuota(trx, policy, subject, now) };
    const rate = await takeQuota(trx, policy, subject, now, 'Back off to the next UTC day.');
    const id = randomId('rsvp');
    await rsvps.insert(trx, {
      id,
      event_url: request.eventUrl,
      member_id: request.memberId,
      token_id: request.tokenId,
      email: request.email,
      name: request.name,
      status: 'queued',
      created_at: now,
      attempts: 0,
      next_attempt_at: now,
      locked_until: null,
      settled_at: null,
      last_error: null,
    });
    return { id, wasDup: false, rate };
  });
}

/**
 * Withdraws the member's RSVPs to the event that are queued or confirmed: they become `cancelled`,
 * a queued one is never delivered, and a later RSVP to the same event is a new one (not a
 * duplicate). How many were withdrawn (0: there was none to withdraw).
 */
export async function cancelRsvp(
  deps: Clocked & WritePort,
  memberId: string,
  eventUrl: string,
): Promise<number> {
  const now = deps.clock.now();
  return transact(deps, (trx) => rsvps.cancelLive(trx, memberId, eventUrl, now));
}

/** The member's latest RSVP to the event, whatever became of it (the event page shows it). */
export function latestRsvp(
  deps: Store,
  memberId: string,
  eventUrl: string,
): Promise<{ id: string; status: string; created_at: number } | undefined> {
  return rsvps.latestOf(deps.db, memberId, eventUrl);
}
