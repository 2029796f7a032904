import { MS } from '../../clock.ts';
import { BriefReuse } from '../../storage/brief-reuse.ts';
import { events } from '../../storage/events.ts';
import type { EventsTable, Executor } from '../../storage/schema.ts';
import type { Clocked, OnDatabase, Store } from '../ports.ts';

/** The upcoming list is stale when the cache was last refreshed longer ago than this (reference §1). */
export const STALE_AFTER_MS = 90 * MS.minute;
/** How long one instance reuses its upcoming list before reading the table again. */
const LIST_REUSE_MS = 2 * MS.second;

/** Event (spec 2.12) as agents receive it. */
export interface WireEvent {
  platform_url: string;
  title: string;
  start: string;
  end: string | null;
  location: string | null;
  cover_url: string | null;
  description: string | null;
}

export function toWireEvent(row: EventsTable): WireEvent {
  return {
    platform_url: row.platform_url,
    title: row.title,
    start: new Date(Number(row.start_at)).toISOString(),
    end: row.end_at === null ? null : new Date(Number(row.end_at)).toISOString(),
    location: row.location,
    cover_url: row.cover_url,
    description: row.description,
  };
}

/**
 * The canonical form of an event-platform URL: https, the first configured host, the path without a
 * trailing slash, no query or fragment. Undefined when the URL is not on one of the platform's hosts.
 */
export function canonicalEventUrl(raw: string, hosts: readonly string[]): string | undefined {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  if (!hosts.includes(url.hostname.toLowerCase())) return undefined;
  const path = url.pathname.replace(/\/+$/, '');
  if (path === '') return undefined;
  return `https://${hosts[0]}${path}`;
}

/**
 * The canonical URL of any event this service can look up: an event-platform URL, or the page of an
 * approved member proposal published here (`{public_url}/events/<id>`).
 */
export function resolveEventUrl(
  config: { eventUrlHosts: string[]; publicUrl: string },
  raw: string,
): string | undefined {
  const local = `${config.publicUrl}/events/`;
  const trimmed = raw.trim();
  if (trimmed.startsWith(local) && /^[A-Za-z0-9_-]+$/.test(trimmed.slice(local.length))) return trimmed;
  return canonicalEventUrl(trimmed, config.eventUrlHosts);
}

/** An event published here rather than on the platform (its RSVPs are not sent to the platform). */
export function isLocalEventUrl(config: { publicUrl: string }, url: string): boolean {
  return url.startsWith(`${config.publicUrl}/events/`);
}

interface UpcomingSnapshot {
  /** Events not ended when the table was read, converted once per read, not once per request. */
  events: WireEvent[];
  refreshedAt: number | null;
  /** Answers already built from this read, by limit and cache age. */
  answers: Map<string, UpcomingList>;
  /** The same events by canonical URL (built on the first lookup). */
  byUrl?: Map<string, WireEvent>;
}
const upcomingReads = new BriefReuse<UpcomingSnapshot>(LIST_REUSE_MS);

/** Forget this instance's reused list (after a write through it). */
export function forgetUpcoming(deps: OnDatabase & Clocked): void {
  upcomingReads.forget(deps);
}

export function cacheRefreshedAt(db: Executor): Promise<number | null> {
  return events.refreshedAt(db);
}

export function markRefreshed(db: Executor, at: number): Promise<void> {
  return events.markRefreshed(db, at);
}

export interface UpcomingList {
  events: WireEvent[];
  ageMinutes: number | null;
  stale: boolean;
}

/**
 * Events that have not ended yet, soonest first. One instance reads the table at most every
 * LIST_REUSE_MS, so an event that ends, or a change made on another instance, shows within 2 s.
 */
function upcomingSnapshot(deps: Store & OnDatabase & Clocked): UpcomingSnapshot | Promise<UpcomingSnapshot> {
  return upcomingReads.get(deps, 'upcoming', async () => {
    const now = deps.clock.now();
    const rows = await events.upcoming(deps.db, now, 500);
    return {
      events: rows.map(toWireEvent),
      refreshedAt: await cacheRefreshedAt(deps.db),
      answers: new Map(),
    };
  });
}

/** The list itself while the reused read holds it (see BriefReuse.get), else a promise of it. */
export function listUpcoming(
  deps: Store & OnDatabase & Clocked,
  limit: number,
): UpcomingList | Promise<UpcomingList> {
  const snapshot = upcomingSnapshot(deps);
  if (snapshot instanceof Promise) return snapshot.then((loaded) => listOf(deps, loaded, limit));
  return listOf(deps, snapshot, limit);
}

function listOf(deps: Clocked, snapshot: UpcomingSnapshot, limit: number): UpcomingList {
  const now = deps.clock.now();
  const age = snapshot.refreshedAt === null ? null : Math.max(0, now - snapshot.refreshedAt);
  const ageMinutes = age === null ? null : Math.floor(age / MS.minute);
  const stale = age === null || age > STALE_AFTER_MS;
  const key = `${limit}:${ageMinutes}:${stale}`;
  let answer = snapshot.answers.get(key);
  if (!answer) {
    answer = { events: snapshot.events.slice(0, limit), ageMinutes, stale };
    snapshot.answers.set(key, answer);
  }
  return answer;
}

/**
 * One event by canonical URL: from this instance's upcoming list when it is there (the event itself,
 * at once, while the list is reused: see listUpcoming), else a promise of it or of the table's row.
 */
export function lookupEvent(
  deps: Store & OnDatabase & Clocked,
  canonicalUrl: string,
): WireEvent | undefined | Promise<WireEvent | undefined> {
  const snapshot = upcomingSnapshot(deps);
  if (snapshot instanceof Promise) return snapshot.then((loaded) => eventIn(deps, loaded, canonicalUrl));
  return eventIn(deps, snapshot, canonicalUrl);
}

function eventIn(
  deps: Store,
  snapshot: UpcomingSnapshot,
  canonicalUrl: string,
): WireEvent | Promise<WireEvent | undefined> {
  snapshot.byUrl ??= new Map(snapshot.events.map((event) => [event.platform_url, event]));
  return snapshot.byUrl.get(canonicalUrl) ?? storedEvent(deps, canonicalUrl);
}

/** An event that is not in the upcoming list (past, or beyond its length), from the table. */
async function storedEvent(deps: Store, canonicalUrl: string): Promise<WireEvent | undefined> {
  const row = await findEventByUrl(deps.db, canonicalUrl);
  return row && toWireEvent(row);
}

export function findEventByUrl(db: Executor, canonicalUrl: string): Promise<EventsTable | undefined> {
  return events.byUrl(db, canonicalUrl);
}

/** An event by its id in the cache (the event page's address for an event of the platform). */
export function findEventById(db: Executor, id: string): Promise<EventsTable | undefined> {
  return events.byId(db, id);
}

/** Upcoming events with their ids (the pages link each to its page), soonest first. */
export function upcomingEventRows(deps: Store & Clocked, limit: number): Promise<EventsTable[]> {
  return events.upcoming(deps.db, deps.clock.now(), limit);
}
