import { MS } from '../../clock.ts';
import { bookings } from '../../storage/bookings.ts';
import { resources } from '../../storage/resources.ts';
import type { Executor } from '../../storage/schema.ts';
import type { Clocked, Store } from '../ports.ts';
import { isWindow, type OpeningHours, openWindowOn, parseOpeningHours } from './opening-hours.ts';

/** How far ahead the listing shows confirmed bookings. */
export const AVAILABILITY_HORIZON_MS = 7 * MS.day;
/** The booking queue is behind (the listing says stale) when a request waits longer than this. */
export const QUEUE_STALE_MS = 5 * MS.minute;

export interface ResourceView {
  id: string;
  kind: string;
  name: string;
  capacity: number;
  open_hours: OpeningHours;
  bookable: boolean;
  busy: { start: string; end: string }[];
  queued_requests: number;
}

export interface ResourceListing {
  resources: ResourceView[];
  as_of: string;
  queue: { queued: number; oldest_queued_age_s: number | null };
  stale: boolean;
}

/** Rooms and printers with their confirmed bookings ahead and the state of the booking queue. */
export async function listResources(deps: Store & Clocked): Promise<ResourceListing> {
  const now = deps.clock.now();
  const all = await resources.all(deps.db);
  const ahead = await bookings.queuedAndAhead(deps.db, now, now + AVAILABILITY_HORIZON_MS);
  const queued = ahead.filter((b) => b.status === 'queued');
  const oldest = queued.reduce<number | null>(
    (min, b) => Math.min(min ?? Infinity, Number(b.created_at)),
    null,
  );
  const oldestAge = oldest === null ? null : Math.max(0, Math.floor((now - oldest) / MS.second));
  return {
    resources: all.map((r) => ({
      id: r.id,
      kind: r.kind,
      name: r.name,
      capacity: Number(r.capacity),
      open_hours: parseOpeningHours(r.open_hours),
      bookable: Number(r.bookable) === 1,
      busy: ahead
        .filter((b) => b.resource_id === r.id && b.status === 'confirmed')
        .map((b) => ({
          start: new Date(Number(b.start_at)).toISOString(),
          end: new Date(Number(b.end_at)).toISOString(),
        })),
      queued_requests: queued.filter((b) => b.resource_id === r.id).length,
    })),
    as_of: new Date(now).toISOString(),
    queue: { queued: queued.length, oldest_queued_age_s: oldestAge },
    stale: oldestAge !== null && oldestAge * MS.second > QUEUE_STALE_MS,
  };
}

export interface ResourceDefinition {
  id: string;
  kind: string;
  name: string;
  capacity: number;
  openHours: OpeningHours;
  bookable: boolean;
}

/** Adds a resource or replaces its definition (bookings are kept). */
export async function saveResource(db: Executor, resource: ResourceDefinition): Promise<void> {
  if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(resource.id))
    throw new Error('resource id: lowercase letters, digits and dashes, at most 63');
  if (!isWindow(resource.openHours.weekdays) || !isWindow(resource.openHours.weekends))
    throw new Error('opening hours: HH:MM-HH:MM (UTC) or "closed"');
  if (!Number.isInteger(resource.capacity) || resource.capacity < 1)
    throw new Error('capacity: an integer >= 1');
  await resources.save(db, {
    id: resource.id,
    kind: resource.kind,
    name: resource.name,
    capacity: resource.capacity,
    open_hours: JSON.stringify(resource.openHours),
    bookable: resource.bookable ? 1 : 0,
  });
}

/**
 * The free stretches of a resource's opening hours, UTC day by UTC day from the day of `now` for
 * `days` days: each day's opening window less its confirmed bookings (and, today, less the time
 * already past). Queued requests are not subtracted: the calendar has not decided them.
 */
export function freeSlots(
  resource: Pick<ResourceView, 'open_hours' | 'busy'>,
  now: number,
  days = 7,
): { day: number; free: { from: number; to: number }[] }[] {
  const busy = resource.busy
    .map((b) => ({ from: Date.parse(b.start), to: Date.parse(b.end) }))
    .sort((a, b) => a.from - b.from);
  const today = now - (now % MS.day);
  const out: { day: number; free: { from: number; to: number }[] }[] = [];
  for (let i = 0; i < days; i++) {
    const day = today + i * MS.day;
    const window = openWindowOn(resource.open_hours, day);
    const free: { from: number; to: number }[] = [];
    if (window) {
      let cursor = Math.max(window.from, now);
      for (const b of busy) {
        if (b.to <= cursor || b.from >= window.to) continue;
        if (b.from > cursor) free.push({ from: cursor, to: b.from });
        cursor = Math.max(cursor, b.to);
      }
      if (cursor < window.to) free.push({ from: cursor, to: window.to });
    }
    out.push({ day, free });
  }
  return out;
}
