import type { FastifyRequest } from 'fastify';
import { wallTimeInZone } from '../domain/events/ics.ts';
import { html, type SafeHtml } from './html.ts';

/**
 * The zone event times are shown in: the `tz` field of the page's address (a GET form on the events
 * pages sets it; links between those pages carry it on), an IANA name the runtime knows, else UTC.
 * Pages run no script, so the browser's own zone is not read: the member picks theirs once and the
 * address keeps it (bookmarkable). docs/decisions.md has the reasons.
 */
export function zoneOf(request: FastifyRequest): string {
  const raw = (request.query as Record<string, unknown> | undefined)?.tz;
  return typeof raw === 'string' && isZone(raw) ? raw : 'UTC';
}

export function isZone(name: string): boolean {
  if (name.length > 64) return false;
  try {
    new Intl.DateTimeFormat('en-GB', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

const formats = new Map<string, Intl.DateTimeFormat>();

/** An instant as the zone's clocks show it, with the zone's short name: "Wed 9 Dec 2026, 18:30 CET". */
export function shownIn(ms: number, zone: string): string {
  let format = formats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-GB', {
      timeZone: zone,
      weekday: 'short',
      day: 'numeric',
      month: 'short',
      year: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
      timeZoneName: 'short',
    });
    formats.set(zone, format);
  }
  return format.format(ms);
}

/**
 * From `start` to `end` (none: the start alone) as <time> elements in the zone; within one day of
 * the zone's calendar (and one zone name), the day is written once: "Tue, 21 Jul 2026, 12:00 to 14:00 UTC".
 */
export function timeRangeIn(start: number, end: number | null, zone: string): SafeHtml {
  if (end === null) return timeIn(start, zone);
  const [from, to] = [shownIn(start, zone), shownIn(end, zone)];
  const split = (shown: string) => /^(.*), (\d{2}:\d{2}) (\S+)$/.exec(shown);
  const [a, b] = [split(from), split(to)];
  if (!a || !b || a[1] !== b[1] || a[3] !== b[3]) return html`${timeIn(start, zone)} to ${timeIn(end, zone)}`;
  return html`<time datetime="${new Date(start).toISOString()}">${a[1]}, ${a[2]}</time> to <time datetime="${new Date(end).toISOString()}">${b[2]} ${b[3]}</time>`;
}

/** A <time> element for an instant, shown in the zone. */
export function timeIn(ms: number, zone: string): SafeHtml {
  return html`<time datetime="${new Date(ms).toISOString()}">${shownIn(ms, zone)}</time>`;
}

/**
 * The instant a `datetime-local` value (`YYYY-MM-DDTHH:MM`) names in the zone, or undefined when it
 * is not one.
 */
export function instantOfLocal(value: string | undefined, zone: string): number | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})$/.exec(value ?? '');
  if (!match) return undefined;
  const [year, month, day, hour, minute] = match.slice(1).map(Number);
  const wall = Date.UTC(year, month - 1, day, hour, minute);
  if (Number.isNaN(wall) || new Date(wall).getUTCDate() !== day) return undefined;
  return zone === 'UTC' ? wall : (wallTimeInZone(wall, zone) ?? wall);
}

let zoneNames: string[] | undefined;

/** The zone picker: every IANA zone the runtime knows, the current one selected. */
export function zoneSelect(zone: string, id = 'tz'): SafeHtml {
  zoneNames ??= ['UTC', ...Intl.supportedValuesOf('timeZone').filter((name) => name !== 'UTC')];
  return html`<label for="${id}">Time zone</label> <select id="${id}" name="tz">${zoneNames.map(
    (name) => html`<option${name === zone ? html` selected` : ''}>${name}</option>`,
  )}</select>`;
}

/** `?tz=…` for a link that keeps the zone (nothing for UTC). */
export function zoneQuery(zone: string): string {
  return zone === 'UTC' ? '' : `?tz=${encodeURIComponent(zone)}`;
}
