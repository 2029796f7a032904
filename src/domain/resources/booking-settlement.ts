import { bookings } from '../../storage/bookings.ts';
import { resources } from '../../storage/resources.ts';
import type { BookingsTable, Executor } from '../../storage/schema.ts';
import { transact, type WritePort } from '../../storage/transactions.ts';
import { appendEvent } from '../eventlog/eventlog.ts';
import type { Clocked, Configured, OnDatabase, Store } from '../ports.ts';
import { type Claim, claimDueJobs, settleJob } from '../queue/claim.ts';
import { fitsOpeningHours, parseOpeningHours } from './opening-hours.ts';

type Decision = { status: 'confirmed' } | { status: 'declined'; reason: string };

async function decide(trx: Executor, booking: BookingsTable, now: number): Promise<Decision> {
  const resource = await resources.byId(trx, booking.resource_id);
  if (!resource || Number(resource.bookable) !== 1)
    return { status: 'declined', reason: 'resource_unavailable' };
  if (Number(booking.start_at) < now) return { status: 'declined', reason: 'start_passed' };
  if (
    !fitsOpeningHours(
      parseOpeningHours(resource.open_hours),
      Number(booking.start_at),
      Number(booking.end_at),
    )
  )
    return { status: 'declined', reason: 'outside_opening_hours' };
  const clash = await bookings.overlapsConfirmed(trx, booking.resource_id, booking.start_at, booking.end_at);
  return clash ? { status: 'declined', reason: 'overlaps_another_booking' } : { status: 'confirmed' };
}

/**
 * Settles one claimed booking against the calendar in one transaction, with its event-log record.
 * On PostgreSQL the resource row is locked first, so two workers deciding overlapping bookings of
 * one resource take turns and the second sees the first's confirmation; the embedded engine has a
 * single writer, so its transactions already take turns.
 */
async function settle(deps: Clocked & OnDatabase & WritePort, claim: Claim): Promise<void> {
  await transact(deps, async (trx) => {
    const booking = await bookings.get(trx, claim.id);
    await resources.lockForDecision(trx, booking.resource_id);
    const now = deps.clock.now();
    const decision = await decide(trx, booking, now);
    const reason = decision.status === 'declined' ? decision.reason : null;
    if (!(await settleJob(trx, 'bookings', claim, { status: decision.status, reason, settled_at: now })))
      return;
    const target = {
      booking_id: booking.id,
      resource_id: booking.resource_id,
      start: new Date(Number(booking.start_at)).toISOString(),
      end: new Date(Number(booking.end_at)).toISOString(),
    };
    await appendEvent(
      trx,
      booking.member_id,
      {
        type: decision.status === 'confirmed' ? 'booking_confirmed' : 'booking_declined',
        actor: { kind: 'service', name: 'booking calendar' },
        target,
        payload: reason ? { reason } : {},
        actions: [
          { label: 'See availability', mcp_tool: 'ic_resources_list', args: {}, consequential: false },
          ...(reason
            ? [
                {
                  label: 'Book another time',
                  mcp_tool: 'ic_resources_book',
                  args: { resource_id: booking.resource_id },
                  consequential: true,
                },
              ]
            : []),
        ],
      },
      now,
    );
  });
}

/**
 * One pass over queued bookings, oldest first. A booking whose settlement fails (a lost connection,
 * a busy embedded database) stays claimed until its lease ends and is then decided again.
 */
export async function settleQueuedBookings(
  deps: Store & Clocked & Configured<'workerLeaseSeconds'> & OnDatabase & WritePort,
  limit = 50,
  onError: (error: unknown, bookingId: string) => void = () => {},
): Promise<number> {
  const claims = await claimDueJobs(
    deps.db,
    'bookings',
    deps.clock.now(),
    limit,
    deps.config.workerLeaseSeconds * 1000,
  );
  for (const claim of claims) {
    try {
      await settle(deps, claim);
    } catch (error) {
      onError(error, claim.id);
    }
  }
  return claims.length;
}
