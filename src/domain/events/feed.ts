import { readFile } from 'node:fs/promises';
import { outboundFetch } from '../../outbound.ts';
import { sha256 } from '../../secrets.ts';
import { events } from '../../storage/events.ts';
import { transact, type WritePort } from '../../storage/transactions.ts';
import type { Clocked, Configured, OnDatabase, Store } from '../ports.ts';
import { canonicalEventUrl, forgetUpcoming, markRefreshed } from './events.ts';
import type { FeedEvent } from './ics.ts';

const FETCH_TIMEOUT_MS = 15_000;
const MAX_FEED_BYTES = 10 * 1024 * 1024;

export interface RefreshReport {
  source: string;
  stored: number;
  removed: number;
  /** Events without a URL on one of the platform's hosts: they could never be looked up. */
  skipped: number;
  /** Events the cache serves now, whatever their source (feed, demo, approved proposals). */
  served: number;
}

/** Reads the feed: an http(s) URL through fetch, anything else as a local file path. */
export async function readFeed(location: string): Promise<string> {
  if (!/^https?:\/\//i.test(location)) return readFile(location, 'utf8');
  const response = await outboundFetch(
    location,
    { headers: { accept: 'text/calendar, */*;q=0.5' } },
    { timeoutMs: FETCH_TIMEOUT_MS, maxBytes: MAX_FEED_BYTES },
  );
  if (!response.ok) throw new Error(`events feed answered HTTP ${response.status}`);
  return response.text();
}

/** The platform URL of a feed event: its URL property, else the first platform link in its text. */
function platformUrlOf(event: FeedEvent, hosts: readonly string[]): string | undefined {
  const candidates = [
    event.url,
    ...(`${event.description ?? ''} ${event.location ?? ''}`.match(/https?:\/\/[^\s<>"]+/g) ?? []),
  ];
  for (const candidate of candidates) {
    const canonical = candidate ? canonicalEventUrl(candidate, hosts) : undefined;
    if (canonical) return canonical;
  }
  return undefined;
}

/**
 * Which of two events with one platform URL (the occurrences of a recurring event share theirs)
 * the cache keeps: the next one that has not ended, else the one that ended last.
 */
function sooner(event: FeedEvent, held: FeedEvent, now: number): boolean {
  const ongoing = (e: FeedEvent) => (e.end ?? e.start) >= now;
  if (ongoing(event) !== ongoing(held)) return ongoing(event);
  return ongoing(event) ? event.start <= held.start : event.start >= held.start;
}

/**
 * Replaces the feed's rows of the events cache with the feed's current content, in one transaction,
 * and stamps the cache age. Approved member proposals and local events are left alone. A feed that
 * cannot be read or parsed changes nothing: the old cache stays and ages into `stale`.
 */
export async function refreshEventsFromFeed(
  deps: Clocked & Configured<'eventUrlHosts'> & OnDatabase & WritePort,
  text: string,
  source: string,
): Promise<RefreshReport> {
  const hosts = deps.config.eventUrlHosts;
  const now = deps.clock.now();
  const byUrl = new Map<string, FeedEvent>();
  let skipped = 0;
  // The iCalendar parser is loaded by the first refresh: an instance without a feed never loads it.
  const { occurrenceWindow, parseIcs } = await import('./ics.ts');
  for (const event of parseIcs(text, occurrenceWindow(now))) {
    const url = platformUrlOf(event, hosts);
    if (!url || event.cancelled) {
      skipped += url ? 0 : 1;
      continue;
    }
    const held = byUrl.get(url);
    if (!held || sooner(event, held, now)) byUrl.set(url, event);
  }
  const report = await transact(deps, async (trx) => {
    const gone = (await events.urlsOf(trx, 'feed')).filter((url) => !byUrl.has(url));
    for (const url of gone) await events.removeByUrl(trx, url);
    for (const [url, event] of byUrl) {
      const row = {
        title: event.title.slice(0, 300),
        start_at: event.start,
        end_at: event.end,
        location: event.location?.slice(0, 300) ?? null,
        cover_url: event.coverUrl,
        description: event.description?.slice(0, 4000) ?? null,
        updated_at: now,
        source: 'feed',
      };
      await events.upsertByUrl(trx, `evt_${sha256(`feed:${url}`).slice(0, 16)}`, url, row);
    }
    await markRefreshed(trx, now);
    return {
      source,
      stored: byUrl.size,
      removed: gone.length,
      skipped,
      served: await events.countUpcoming(trx, now),
    };
  });
  forgetUpcoming(deps);
  return report;
}

/** One scheduled pass: the configured feed, or, with none, a stamp saying the local list is current. */
export async function refreshEvents(
  deps: Store & Clocked & Configured<'eventsFeed' | 'eventUrlHosts'> & OnDatabase & WritePort,
): Promise<RefreshReport> {
  const feed = deps.config.eventsFeed;
  if (!feed) {
    // Without a platform feed the local list (demo, approved proposals) is the whole source of truth.
    const now = deps.clock.now();
    await markRefreshed(deps.db, now);
    forgetUpcoming(deps);
    return {
      source: 'local',
      stored: 0,
      removed: 0,
      skipped: 0,
      served: await events.countUpcoming(deps.db, now),
    };
  }
  return refreshEventsFromFeed(
    deps,
    await readFeed(feed),
    feed.startsWith('http') ? new URL(feed).host : 'file',
  );
}
