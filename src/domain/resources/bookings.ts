import { MS } from '../../clock.ts';
import { apiError } from '../../core/errors.ts';
import { peekQuota, takeQuota } from '../../core/quota.ts';
import type { RatePolicy } from '../../core/rate-limit.ts';
import { randomId } from '../../secrets.ts';
import { bookings } from '../../storage/bookings.ts';
import { resources } from '../../storage/resources.ts';
import type { BookingsTable, Executor } from '../../storage/schema.ts';
import { transact, type WritePort } from '../../storage/transactions.ts';
import { appendEvent } from '../eventlog/eventlog.ts';
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

/** Who asks to cancel a booking: a member, and whether they act as an operator. */
export interface Canceller {
  memberId: string;
  operator: boolean;
}

export type CancelOutcome =
  | { kind: 'cancelled'; status: 'cancelled'; wasAlready: boolean; booking: BookingsTable }
  | { kind: 'not_found' }
  | { kind: 'not_cancellable'; status: string };

/**
 * Cancels a queued or confirmed booking for the member who made it, or for an operator: it becomes
 * `cancelled` (reason `cancelled_by_member` or `cancelled_by_operator`), a queued one is never
 * decided and a confirmed one frees its slot. Another member's booking is answered as if it did not
 * exist; cancelling a cancelled booking changes nothing; a declined one cannot be cancelled.
 */
export async function cancelBooking(
  deps: Clocked & WritePort,
  bookingId: string,
  by: Canceller,
): Promise<CancelOutcome> {
  const now = deps.clock.now();
  return transact(deps, async (trx) => {
    const booking = await bookings.find(trx, bookingId);
    if (!booking || (booking.member_id !== by.memberId && !by.operator)) return { kind: 'not_found' };
    if (booking.status === 'cancelled')
      return { kind: 'cancelled', status: 'cancelled', wasAlready: true, booking };
    const reason = booking.member_id === by.memberId ? 'cancelled_by_member' : 'cancelled_by_operator';
    if (!(await bookings.cancel(trx, bookingId, reason, now)))
      return { kind: 'not_cancellable', status: booking.status };
    await appendEvent(
      trx,
      booking.member_id,
      {
        type: 'booking_cancelled',
        actor: by.memberId === booking.member_id ? { kind: 'member' } : { kind: 'operator' },
        target: {
          booking_id: booking.id,
          resource_id: booking.resource_id,
          start: new Date(Number(booking.start_at)).toISOString(),
          end: new Date(Number(booking.end_at)).toISOString(),
        },
        payload: { reason, was: booking.status },
        actions: [
          { label: 'See availability', mcp_tool: 'ic_resources_list', args: {}, consequential: false },
        ],
      },
      now,
    );
    return {
      kind: 'cancelled',
      status: 'cancelled',
      wasAlready: false,
      booking: { ...booking, status: 'cancelled', reason },
    };
  });
}

/** The bookings of the UTC day containing `at`, every member's (the operator's view). */
export function bookingsOfDay(deps: { db: Executor }, at: number) {
  const from = at - (at % MS.day);
  return bookings.between(deps.db, from, from + MS.day);
}
