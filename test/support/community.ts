import { MS } from '../../src/clock.ts';
import { sha256 } from '../../src/secrets.ts';
import type { Schema } from '../../src/storage/schema.ts';
import type { TestApp } from './app.ts';

/** Puts one event into the cache, `inHours` from the test clock; returns its canonical URL. */
export async function cacheEvent(t: TestApp, slug: string, inHours = 48): Promise<string> {
  const url = `https://${t.deps.config.eventUrlHosts[0]}/${slug}`;
  const start = t.clock.now() + inHours * MS.hour;
  await t.deps.db
    .insertInto('events')
    .values({
      id: `evt_${slug}`,
      platform_url: url,
      title: `Event ${slug}`,
      start_at: start,
      end_at: start + 2 * MS.hour,
      location: 'Main hall',
      cover_url: null,
      description: null,
      updated_at: t.clock.now(),
      source: 'feed',
    })
    .execute();
  return url;
}

export async function tokenIdOf(t: TestApp, token: string): Promise<string> {
  const row = await t.deps.db
    .selectFrom('tokens')
    .select('id')
    .where('hash', '=', sha256(token))
    .executeTakeFirstOrThrow();
  return row.id;
}

/** The member's event-log records of one type, oldest first. */
export async function loggedEvents(t: TestApp, memberId: string, type: string) {
  const rows = await t.deps.db
    .selectFrom('event_log')
    .selectAll()
    .where('recipient_id', '=', memberId)
    .where('type', '=', type)
    .orderBy('id')
    .execute();
  return rows.map((row) => ({
    id: Number(row.id),
    target: JSON.parse(row.target),
    payload: JSON.parse(row.payload),
    actions: JSON.parse(row.actions),
  }));
}

/** Row counts of the tables a write could touch: equal before and after means nothing changed. */
export async function rowCounts(t: TestApp, tables: (keyof Schema)[]): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of tables) {
    const row = await t.deps.db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    counts[table] = Number(row.n);
  }
  return counts;
}
