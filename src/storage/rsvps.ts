import type { Executor, RsvpsTable } from './schema.ts';

// Members' RSVPs, queued for delivery to the event platform (table rsvps; the delivery queue's
// claims and settlements are queue.ts's).

export const rsvps = {
  /** The member's latest RSVP to the event made after `since` that neither failed nor was withdrawn: its id. */
  async latestLive(
    executor: Executor,
    memberId: string,
    eventUrl: string,
    since: number,
  ): Promise<string | undefined> {
    const row = await executor
      .selectFrom('rsvps')
      .select('id')
      .where('member_id', '=', memberId)
      .where('event_url', '=', eventUrl)
      .where('created_at', '>', since)
      .where('status', 'in', ['queued', 'confirmed'])
      .orderBy('created_at', 'desc')
      .executeTakeFirst();
    return row?.id;
  },

  async insert(executor: Executor, rsvp: RsvpsTable): Promise<void> {
    await executor.insertInto('rsvps').values(rsvp).execute();
  },

  /** An RSVP known to be there (a claimed one): Kysely's NoResultError if it is not. */
  get(executor: Executor, id: string): Promise<RsvpsTable> {
    return executor.selectFrom('rsvps').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  },

  /** The member's queued and confirmed RSVPs to the event become `cancelled`: how many did. */
  async cancelLive(executor: Executor, memberId: string, eventUrl: string, now: number): Promise<number> {
    const result = await executor
      .updateTable('rsvps')
      .set({ status: 'cancelled', settled_at: now })
      .where('member_id', '=', memberId)
      .where('event_url', '=', eventUrl)
      .where('status', 'in', ['queued', 'confirmed'])
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  },

  /** The member's latest RSVP to the event, whatever its status. */
  latestOf(
    executor: Executor,
    memberId: string,
    eventUrl: string,
  ): Promise<Pick<RsvpsTable, 'id' | 'status' | 'created_at'> | undefined> {
    return executor
      .selectFrom('rsvps')
      .select(['id', 'status', 'created_at'])
      .where('member_id', '=', memberId)
      .where('event_url', '=', eventUrl)
      .orderBy('created_at', 'desc')
      .executeTakeFirst();
  },
};
