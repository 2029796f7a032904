import { MS } from '../../clock.ts';
import { apiError } from '../../core/errors.ts';
import { peekQuota, takeQuota } from '../../core/quota.ts';
import type { RatePolicy } from '../../core/rate-limit.ts';
import { randomId } from '../../secrets.ts';
import { bookings } from '../../storage/bookings.ts';
import { resources } from '../../storage/resources.ts';
import { transact, type WritePort } from '../../storage/transactions.ts';
import type { Clocked, Configured } from '../ports.ts';
import type { QueuedWrite } from '../queue/queued-write.ts';

/** A booking request repeating the exact start time of an earlier one within this window is a duplicate. */
export const BOOKING_DEDUPE_MS = 30 * MS.day;
/** Longest single booking. */
export const LONGEST_BOOKING_MS = 12 * MS.hour;
export const PURPOSE_MAX = 600;

export function bookingQuota(deps: Configured<'limits'>): RatePolicy {
  return { name: 'bookings', limit: deps.config.limits.bookingsPerDay, window: 'utc_day', per: 'token' };
}

export interface BookingRequest {
  resourceId: string;
  memberId: string;
  /** Absent for a browser session: the quota is then counted per member. */
  tokenId: string | null;
  start: number;
  end: number;
  purpose: string;
  email: string | null;
}

/** Checks a request can be queued at all; the worker later decides it against the calendar. */
export function checkBookingWindow(start: number, end: number, now: number): void {
  if (end <= start) throw apiError('invalid_time_range', { start: 'start_iso', end: 'end_iso' });
  if (start < now) throw apiError('start_in_past', { field: 'start_iso' });
  if (end - start > LONGEST_BOOKING_MS)
    throw apiError('booking_too_long', { hours: LONGEST_BOOKING_MS / MS.hour });
}

export async function queueBooking(
  deps: Clocked & Configured<'limits'> & WritePort,
  request: BookingRequest,
): Promise<QueuedWrite> {
  const now = deps.clock.now();
  const policy = bookingQuota(deps);
  const subject = request.tokenId ?? `member:${request.memberId}`;
  return transact(deps, async (trx) => {
    const resource = await resources.byId(trx, request.resourceId);
    if (!resource || Number(resource.bookable) !== 1) throw apiError('unknown_resource');
    const earlier = await bookings.sameRequestSince(trx, request, now - BOOKING_DEDUPE_MS);
    if (earlier) return { id: earlier, wasDup: true, rate: await peekQuota(trx, policy, subject, now) };
    const rate = await takeQuota(trx, policy, subject, now, 'Back off to the next UTC day.');
    const id = randomId('bkg');
    await bookings.insert(trx, {
      id,
      resource_id: request.resourceId,
      member_id: request.memberId,
      token_id: request.tokenId,
      start_at: request.start,
      end_at: request.end,
      purpose: request.purpose,
      email: request.email,
      status: 'queued',
      reason: null,
      created_at: now,
      locked_until: null,
      settled_at: null,
    });
    return { id, wasDup: false, rate };
  });
}
