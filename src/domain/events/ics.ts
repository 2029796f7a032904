/**
 * A reader for the part of iCalendar (RFC 5545) an event platform's feed uses: VEVENTs with UID,
 * SUMMARY, DTSTART/DTEND (UTC, floating with TZID, or all-day dates), LOCATION, DESCRIPTION, URL and
 * an image (RFC 7986 IMAGE or an image ATTACH). Recurrence rules are not expanded: platforms export
 * each occurrence as its own VEVENT.
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

interface Property {
  name: string;
  params: Record<string, string>;
  value: string;
}

export function parseIcs(text: string): FeedEvent[] {
  const events: FeedEvent[] = [];
  let current: Property[] | undefined;
  let depth = 0;
  for (const line of unfold(text)) {
    const property = parseLine(line);
    if (!property) continue;
    if (property.name === 'BEGIN') {
      if (property.value.toUpperCase() === 'VEVENT' && depth === 0) current = [];
      else if (current) depth++;
      continue;
    }
    if (property.name === 'END') {
      if (current && depth > 0) depth--;
      else if (current && property.value.toUpperCase() === 'VEVENT') {
        const event = toEvent(current);
        if (event) events.push(event);
        current = undefined;
      }
      continue;
    }
    // Properties of nested components (VALARM) are not the event's own.
    if (current && depth === 0) current.push(property);
  }
  return events;
}

/** Lines folded by a CRLF followed by a space or tab are one logical line. */
function unfold(text: string): string[] {
  return text
    .replace(/\r\n/g, '\n')
    .replace(/\r/g, '\n')
    .replace(/\n[ \t]/g, '')
    .split('\n');
}

function parseLine(line: string): Property | undefined {
  // The value starts after the first colon that is not inside a quoted parameter value.
  let quoted = false;
  let colon = -1;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (ch === '"') quoted = !quoted;
    else if (ch === ':' && !quoted) {
      colon = i;
      break;
    }
  }
  if (colon <= 0) return undefined;
  const [rawName, ...rawParams] = splitOutsideQuotes(line.slice(0, colon), ';');
  const params: Record<string, string> = {};
  for (const param of rawParams) {
    const eq = param.indexOf('=');
    if (eq > 0) params[param.slice(0, eq).toUpperCase()] = param.slice(eq + 1).replace(/^"|"$/g, '');
  }
  return { name: rawName.toUpperCase(), params, value: line.slice(colon + 1) };
}

function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let quoted = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '"') quoted = !quoted;
    else if (text[i] === separator && !quoted) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

function unescapeText(value: string): string {
  return value.replace(/\\([\\;,nN])/g, (_, ch: string) => (ch === 'n' || ch === 'N' ? '\n' : ch));
}

function toEvent(properties: Property[]): FeedEvent | undefined {
  const first = (name: string) => properties.find((p) => p.name === name);
  const uid = first('UID')?.value.trim();
  const start = first('DTSTART');
  const startAt = start ? parseDateTime(start) : undefined;
  if (!uid || startAt === undefined) return undefined;
  const end = first('DTEND');
  const text = (name: string) => {
    const value = first(name)?.value;
    return value === undefined || value.trim() === '' ? null : unescapeText(value).trim();
  };
  const image =
    first('IMAGE') ??
    properties.find((p) => p.name === 'ATTACH' && (p.params.FMTTYPE ?? '').startsWith('image/'));
  return {
    uid,
    title: text('SUMMARY') ?? '(untitled event)',
    start: startAt,
    end: end ? (parseDateTime(end) ?? null) : null,
    location: text('LOCATION'),
    description: text('DESCRIPTION'),
    url: text('URL'),
    coverUrl: image && /^https?:\/\//i.test(image.value) ? image.value.trim() : null,
    cancelled: (first('STATUS')?.value ?? '').trim().toUpperCase() === 'CANCELLED',
  };
}

/** DATE-TIME in UTC (…Z), in a named zone (TZID), floating (taken as UTC), or an all-day DATE. */
function parseDateTime(property: Property): number | undefined {
  const match = /^(\d{4})(\d{2})(\d{2})(?:T(\d{2})(\d{2})(\d{2})(Z)?)?$/.exec(property.value.trim());
  if (!match) return undefined;
  const [, y, mo, d, h = '0', mi = '0', s = '0', utc] = match;
  const wall = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  if (Number.isNaN(wall)) return undefined;
  const zone = property.params.TZID;
  if (utc || !zone || match[4] === undefined) return wall;
  return wallTimeInZone(wall, zone) ?? wall;
}

/** The instant at which the clocks of `zone` show `wall` (wall time encoded as if it were UTC). */
function wallTimeInZone(wall: number, zone: string): number | undefined {
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
