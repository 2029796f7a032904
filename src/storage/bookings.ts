import { type Page, type PageRequest, pageOf } from './paging.ts';
import type { BookingsTable, Executor } from './schema.ts';

// Members' booking requests and the calendar's decisions on them (table bookings; the settling
// queue's claims are queue.ts's).

export const bookings = {
  async insert(executor: Executor, booking: BookingsTable): Promise<void> {
    await executor.insertInto('bookings').values(booking).execute();
  },

  /** A booking known to be there (a claimed one): Kysely's NoResultError if it is not. */
  get(executor: Executor, id: string): Promise<BookingsTable> {
    return executor.selectFrom('bookings').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  },

  /** The member's request for the same resource and start made after `since`: its id. */
  async sameRequestSince(
    executor: Executor,
    request: { memberId: string; resourceId: string; start: number },
    since: number,
  ): Promise<string | undefined> {
    const row = await executor
      .selectFrom('bookings')
      .select('id')
      .where('member_id', '=', request.memberId)
      .where('resource_id', '=', request.resourceId)
      .where('start_at', '=', request.start)
      .where('created_at', '>', since)
      .executeTakeFirst();
    return row?.id;
  },

  /** Whether a confirmed booking of the resource overlaps [start, end). */
  async overlapsConfirmed(
    executor: Executor,
    resourceId: string,
    start: number,
    end: number,
  ): Promise<boolean> {
    const clash = await executor
      .selectFrom('bookings')
      .select('id')
      .where('resource_id', '=', resourceId)
      .where('status', '=', 'confirmed')
      .where('start_at', '<', end)
      .where('end_at', '>', start)
      .executeTakeFirst();
    return clash !== undefined;
  },

  /** Queued bookings, and confirmed ones not ended at `now` that start before `horizon`; by start. */
  queuedAndAhead(
    executor: Executor,
    now: number,
    horizon: number,
  ): Promise<Pick<BookingsTable, 'resource_id' | 'status' | 'start_at' | 'end_at' | 'created_at'>[]> {
    return executor
      .selectFrom('bookings')
      .select(['resource_id', 'status', 'start_at', 'end_at', 'created_at'])
      .where((eb) =>
        eb.or([
          eb('status', '=', 'queued'),
          eb.and([eb('status', '=', 'confirmed'), eb('end_at', '>', now), eb('start_at', '<', horizon)]),
        ]),
      )
      .orderBy('start_at')
      .execute();
  },

  /**
   * One page of a member's bookings by start, newest first (ties by id), with their resource's
   * name: a range of the index (member_id, start_at, id), whatever the page.
   */
  pageOfMember(
    executor: Executor,
    memberId: string,
    page: PageRequest,
  ): Promise<
    Page<
      Pick<BookingsTable, 'id' | 'start_at' | 'end_at' | 'status' | 'reason' | 'purpose'> & { name: string }
    >
  > {
    return pageOf(
      executor
        .selectFrom('bookings')
        .innerJoin('resources', 'resources.id', 'bookings.resource_id')
        .select([
          'bookings.id',
          'resources.name',
          'bookings.start_at',
          'bookings.end_at',
          'bookings.status',
          'bookings.reason',
          'bookings.purpose',
        ])
        .where('bookings.member_id', '=', memberId),
      { time: 'bookings.start_at', id: 'bookings.id', direction: 'desc' },
      page,
    );
  },

  /** A booking by id, if there is one. */
  find(executor: Executor, id: string): Promise<BookingsTable | undefined> {
    return executor.selectFrom('bookings').selectAll().where('id', '=', id).executeTakeFirst();
  },

  /** A queued or confirmed booking becomes `cancelled` with `reason`: whether it did. */
  async cancel(executor: Executor, id: string, reason: string, now: number): Promise<boolean> {
    const result = await executor
      .updateTable('bookings')
      .set({ status: 'cancelled', reason, settled_at: now, locked_until: null })
      .where('id', '=', id)
      .where('status', 'in', ['queued', 'confirmed'])
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  },

  /** Every booking that overlaps [from, to), by start, with its resource's name and its member's. */
  between(
    executor: Executor,
    from: number,
    to: number,
  ): Promise<
    (Pick<
      BookingsTable,
      'id' | 'resource_id' | 'member_id' | 'start_at' | 'end_at' | 'status' | 'reason' | 'purpose'
    > & { resource_name: string; member_name: string | null })[]
  > {
    return executor
      .selectFrom('bookings')
      .innerJoin('resources', 'resources.id', 'bookings.resource_id')
      .leftJoin('members', 'members.id', 'bookings.member_id')
      .select([
        'bookings.id',
        'bookings.resource_id',
        'bookings.member_id',
        'resources.name as resource_name',
        'members.name as member_name',
        'bookings.start_at',
        'bookings.end_at',
        'bookings.status',
        'bookings.reason',
        'bookings.purpose',
      ])
      .where('bookings.start_at', '<', to)
      .where('bookings.end_at', '>', from)
      .orderBy('bookings.start_at')
      .orderBy('bookings.id')
      .limit(500)
      .execute();
  },
};
