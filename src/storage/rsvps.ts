import type { Executor, RsvpsTable } from './schema.ts';

// Members' RSVPs, queued for delivery to the event platform (table rsvps; the delivery queue's
// claims and settlements are queue.ts's).

export const rsvps = {
  /** The member's latest RSVP to the event made after `since` that did not fail: its id. */
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
      .where('status', '!=', 'failed')
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
};
