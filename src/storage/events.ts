import type { EventsTable, Executor } from './schema.ts';

// The events cache (table events): the platform feed's events, approved member proposals and local
// ones; and when it was last refreshed (a row of settings).

const REFRESHED_AT_KEY = 'events_refreshed_at';

/** An event's columns but its id and URL: what a feed refresh writes over. */
export type EventColumns = Omit<EventsTable, 'id' | 'platform_url'>;

export const events = {
  /**
   * Events not ended at `now` (by their end, else their start), soonest first (ties by id), at most
   * `limit`. Read in two index ranges, so past events cost nothing however many accumulate: those
   * started before `now` and not ended (the range of events_end from `now`, started ones only), then
   * those starting from `now` (events_start_id). Every started one sorts before every other.
   */
  async upcoming(executor: Executor, now: number, limit: number): Promise<EventsTable[]> {
    const started = await events.startedQuery(executor, now).execute();
    started.sort(
      (a, b) => Number(a.start_at) - Number(b.start_at) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
    );
    if (started.length >= limit) return started.slice(0, limit);
    const starting = await events.startingQuery(executor, now, limit - started.length).execute();
    return [...started, ...starting];
  },

  /** The events under way at `now` (started, not ended), in no order: a range of events_end. */
  startedQuery(executor: Executor, now: number) {
    return executor
      .selectFrom('events')
      .selectAll()
      .where((eb) => eb(eb.fn.coalesce('end_at', 'start_at'), '>=', now))
      .where('start_at', '<', now);
  },

  /** The first `limit` events starting at `now` or later, by start then id: a range of events_start_id. */
  startingQuery(executor: Executor, now: number, limit: number) {
    return executor
      .selectFrom('events')
      .selectAll()
      .where('start_at', '>=', now)
      .orderBy('start_at')
      .orderBy('id')
      .limit(limit);
  },

  /** How many events have not ended at `now`, as upcoming counts them. */
  async countUpcoming(executor: Executor, now: number): Promise<number> {
    const row = await executor
      .selectFrom('events')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where((eb) => eb(eb.fn.coalesce('end_at', 'start_at'), '>=', now))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  byId(executor: Executor, id: string): Promise<EventsTable | undefined> {
    return executor.selectFrom('events').selectAll().where('id', '=', id).executeTakeFirst();
  },

  byUrl(executor: Executor, url: string): Promise<EventsTable | undefined> {
    return executor.selectFrom('events').selectAll().where('platform_url', '=', url).executeTakeFirst();
  },

  /** The URLs of the events of one source. */
  async urlsOf(executor: Executor, source: string): Promise<string[]> {
    const rows = await executor
      .selectFrom('events')
      .select(['platform_url'])
      .where('source', '=', source)
      .execute();
    return rows.map((row) => row.platform_url);
  },

  async removeByUrl(executor: Executor, url: string): Promise<void> {
    await executor.deleteFrom('events').where('platform_url', '=', url).execute();
  },

  /** Writes an event by URL: a new row under `id`, or the columns of the one already there. */
  async upsertByUrl(executor: Executor, id: string, url: string, columns: EventColumns): Promise<void> {
    await executor
      .insertInto('events')
      .values({ id, platform_url: url, ...columns })
      .onConflict((oc) => oc.column('platform_url').doUpdateSet(columns))
      .execute();
  },

  async insert(executor: Executor, event: EventsTable): Promise<void> {
    await executor.insertInto('events').values(event).execute();
  },

  /** When the cache was last refreshed (epoch ms), or null when never. */
  async refreshedAt(executor: Executor): Promise<number | null> {
    const row = await executor
      .selectFrom('settings')
      .select('value')
      .where('key', '=', REFRESHED_AT_KEY)
      .executeTakeFirst();
    return row ? Number(row.value) : null;
  },

  async markRefreshed(executor: Executor, at: number): Promise<void> {
    await executor
      .insertInto('settings')
      .values({ key: REFRESHED_AT_KEY, value: String(at) })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value: String(at) }))
      .execute();
  },
};
