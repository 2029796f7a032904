import ICAL from 'ical.js';
import { MS } from '../../clock.ts';

/**
 * An event platform's iCalendar (RFC 5545) feed, read with ical.js: VEVENTs with UID, SUMMARY,
 * DTSTART/DTEND or DURATION, LOCATION, DESCRIPTION, URL and an image (RFC 7986 IMAGE or an image
 * ATTACH). Times are UTC, in a zone the calendar defines (VTIMEZONE), in a zone named by its IANA
 * TZID without a definition (converted with the runtime's zone data), floating (taken as UTC), or
 * all-day dates (midnight UTC). Recurring events (RRULE, RDATE, EXDATE, RECURRENCE-ID overrides) are
 * expanded into one event per occurrence inside a window, each with its own uid.
 */
export interface FeedEvent {
  uid: string;
  title: string;
  start: number;
  end: number | null;
  location: string | null;
  description: string | null;
  url: string | null;
  coverUrl: string | null;
  cancelled: boolean;
}

/** Occurrences of a recurring event are kept when they overlap [from, to] (epoch ms). */
export interface OccurrenceWindow {
  from: number;
  to: number;
}

/** At most this many occurrences of one recurring event. */
export const MAX_OCCURRENCES = 200;
/**
 * Recurrence steps walked from DTSTART for one event and for the whole feed (ical.js takes some
 * 10 µs a step): a daily series begun 27 years ago still reaches today, a FREQ=MINUTELY rule from
 * 1990 cannot hold the refresh for long.
 */
const MAX_STEPS_PER_EVENT = 10_000;
const MAX_STEPS_PER_FEED = 50_000;

/** From a day ago (an occurrence under way) to 180 days ahead. */
export function occurrenceWindow(now: number): OccurrenceWindow {
  return { from: now - MS.day, to: now + 180 * MS.day };
}

type Component = InstanceType<typeof ICAL.Component>;
type Time = InstanceType<typeof ICAL.Time>;

/**
 * The feed's events, occurrences of recurring ones expanded inside `window`. Input that is not
 * iCalendar gives no events; a VEVENT that cannot be read (no UID, no start, a bad value) is
 * skipped, and when the calendar as a whole does not parse, each VEVENT is read on its own.
 */
export function parseIcs(text: string, window: OccurrenceWindow = occurrenceWindow(Date.now())): FeedEvent[] {
  const vevents = readVevents(text);
  const overrides = new Map<string, Component[]>();
  const items: Component[] = [];
  for (const vevent of vevents) {
    const uid = textOf(vevent, 'uid');
    if (!uid) continue;
    if (vevent.hasProperty('recurrence-id')) {
      overrides.set(uid, [...(overrides.get(uid) ?? []), vevent]);
    } else items.push(vevent);
  }
  const budget = { steps: MAX_STEPS_PER_FEED };
  const events: FeedEvent[] = [];
  const expanded = new Set<string>();
  for (const vevent of items) {
    const uid = textOf(vevent, 'uid') as string;
    try {
      if (vevent.hasProperty('rrule') || vevent.hasProperty('rdate')) {
        if (expanded.has(uid)) continue;
        expanded.add(uid);
        events.push(...expand(vevent, uid, overrides.get(uid) ?? [], window, budget));
      } else {
        const event = new ICAL.Event(vevent);
        const one = toEvent(uid, vevent, vevent, event.startDate, event.endDate);
        if (one) events.push(one);
      }
    } catch {
      // A value ical.js cannot read (a malformed date, a broken rule): this event is skipped.
    }
  }
  // Overrides of a series the feed does not hold stand on their own, one occurrence each.
  for (const [uid, list] of overrides) {
    if (expanded.has(uid)) continue;
    for (const vevent of list) {
      try {
        const event = new ICAL.Event(vevent);
        const recurrence = instant(event.recurrenceId, tzidOf(vevent, 'recurrence-id'));
        const one = toEvent(
          `${uid}#${new Date(recurrence).toISOString()}`,
          vevent,
          vevent,
          event.startDate,
          event.endDate,
        );
        if (one) events.push(one);
      } catch {}
    }
  }
  return events;
}

function expand(
  master: Component,
  uid: string,
  overrides: Component[],
  window: OccurrenceWindow,
  budget: { steps: number },
): FeedEvent[] {
  const event = new ICAL.Event(master, { exceptions: overrides });
  const zone = tzidOf(master, 'dtstart');
  const iterator = event.iterator();
  const occurrences: FeedEvent[] = [];
  for (let steps = 0; steps < MAX_STEPS_PER_EVENT && budget.steps > 0; steps++) {
    budget.steps--;
    const next = iterator.next();
    if (!next) break;
    const details = event.getOccurrenceDetails(next);
    const recurrence = instant(details.recurrenceId, zone);
    if (recurrence > window.to) break;
    const item = details.item.component;
    const occurrence = toEvent(
      `${uid}#${new Date(recurrence).toISOString()}`,
      item,
      master,
      details.startDate,
      details.endDate,
    );
    if (!occurrence || occurrence.start > window.to || (occurrence.end ?? occurrence.start) < window.from)
      continue;
    occurrences.push(occurrence);
    if (occurrences.length >= MAX_OCCURRENCES) break;
  }
  return occurrences;
}

/** Every VEVENT of the text: from the calendar, or, if it does not parse, from each VEVENT alone. */
function readVevents(text: string): Component[] {
  try {
    return veventsOf(ICAL.parse(text));
  } catch {
    // One bad line should not cost the whole feed: read each VEVENT with the calendar's zones.
  }
  const lines = text
    .replace(/\r\n?/g, '\n')
    .replace(/\n[ \t]/g, '')
    .split('\n');
  const blocks = (name: string) => {
    const found: string[] = [];
    let open: string[] | undefined;
    for (const line of lines) {
      const upper = line.trim().toUpperCase();
      if (!open && upper === `BEGIN:${name}`) open = [];
      if (open) open.push(line);
      if (open && upper === `END:${name}`) {
        found.push(open.join('\r\n'));
        open = undefined;
      }
    }
    return found;
  };
  const zones = blocks('VTIMEZONE').filter((zone) => parses(`BEGIN:VCALENDAR\r\n${zone}\r\nEND:VCALENDAR`));
  const vevents: Component[] = [];
  for (const block of blocks('VEVENT')) {
    try {
      vevents.push(
        ...veventsOf(ICAL.parse(['BEGIN:VCALENDAR', ...zones, block, 'END:VCALENDAR'].join('\r\n'))),
      );
    } catch {}
  }
  return vevents;
}

function parses(text: string): boolean {
  try {
    ICAL.parse(text);
    return true;
  } catch {
    return false;
  }
}

function veventsOf(jcal: unknown): Component[] {
  if (!Array.isArray(jcal)) return [];
  const roots = (Array.isArray(jcal[0]) ? jcal : [jcal]).map((root) => new ICAL.Component(root));
  return roots.flatMap((root) => (root.name === 'vevent' ? [root] : root.getAllSubcomponents('vevent')));
}

function textOf(component: Component, name: string): string | null {
  const value = component.getFirstPropertyValue(name);
  if (typeof value !== 'string') return null;
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed;
}

function tzidOf(component: Component, name: string): string | undefined {
  const tzid = component.getFirstProperty(name)?.getParameter('tzid');
  return typeof tzid === 'string' ? tzid : undefined;
}

/**
 * One event (or occurrence) from `item`; a property an override leaves out is taken from the
 * series (`master`), since platforms often export only what changed.
 */
function toEvent(
  uid: string,
  item: Component,
  master: Component,
  startDate: Time | null,
  endDate: Time | null,
): FeedEvent | undefined {
  if (!startDate) return undefined;
  const start = instant(startDate, tzidOf(item, 'dtstart'));
  const hasEnd =
    item.hasProperty('dtend') || item.hasProperty('duration') || (item !== master && hasEndOf(master));
  const end = hasEnd && endDate ? instant(endDate, tzidOf(item, 'dtend') ?? tzidOf(item, 'dtstart')) : null;
  const field = (name: string) => textOf(item, name) ?? (item === master ? null : textOf(master, name));
  const image = imageOf(item) ?? (item === master ? undefined : imageOf(master));
  return {
    uid,
    title: field('summary') ?? '(untitled event)',
    start,
    end,
    location: field('location'),
    description: field('description'),
    url: field('url'),
    coverUrl: image && /^https?:\/\//i.test(image) ? image : null,
    cancelled: (textOf(item, 'status') ?? '').toUpperCase() === 'CANCELLED',
  };
}

function hasEndOf(component: Component): boolean {
  return component.hasProperty('dtend') || component.hasProperty('duration');
}

function imageOf(component: Component): string | undefined {
  const property =
    component.getFirstProperty('image') ??
    component
      .getAllProperties('attach')
      .find((p) => String(p.getParameter('fmttype') ?? '').startsWith('image/'));
  const value = property?.getFirstValue();
  return typeof value === 'string' ? value.trim() : undefined;
}

/**
 * The instant of an iCalendar time: an all-day date at midnight UTC; a time in a zone ical.js
 * knows (UTC, or a VTIMEZONE of the calendar) through ical.js; a floating time in the IANA zone its
 * TZID names, or as UTC when it names none or one the runtime does not know.
 */
function instant(time: Time, tzid: string | undefined): number {
  if (time.isDate) return Date.UTC(time.year, time.month - 1, time.day);
  const zone = time.zone?.tzid;
  if (zone && zone !== 'floating') return time.toUnixTime() * 1000;
  const wall = Date.UTC(time.year, time.month - 1, time.day, time.hour, time.minute, time.second);
  return tzid ? (wallTimeInZone(wall, tzid) ?? wall) : wall;
}

/**
 * The instant at which the clocks of IANA `zone` show `wall` (wall time encoded as if it were UTC).
 * ical.js carries no zone data of its own: a TZID without a VTIMEZONE is resolved with Intl.
 */
export function wallTimeInZone(wall: number, zone: string): number | undefined {
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone.replace(/^\//, ''),
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  } catch {
    return undefined;
  }
  const offsetAt = (instant: number) => {
    const parts = Object.fromEntries(format.formatToParts(instant).map((p) => [p.type, p.value]));
    const shown = Date.UTC(
      Number(parts.year),
      Number(parts.month) - 1,
      Number(parts.day),
      Number(parts.hour),
      Number(parts.minute),
      Number(parts.second),
    );
    return shown - instant;
  };
  // Two rounds settle the offset on both sides of a daylight-saving change.
  const guess = wall - offsetAt(wall);
  return wall - offsetAt(guess);
}
