import type { WireEvent } from './events.ts';

/**
 * One event as an iCalendar (RFC 5545) file a member's calendar imports: a VCALENDAR with one
 * VEVENT whose UID is the event's canonical URL, times in UTC. Text values are escaped (§3.3.11)
 * and lines folded at 75 octets (§3.1).
 */
export function eventCalendarFile(event: WireEvent, now: number, productId: string): string {
  const lines = [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    `PRODID:${text(productId)}`,
    'CALSCALE:GREGORIAN',
    'METHOD:PUBLISH',
    'BEGIN:VEVENT',
    `UID:${text(event.platform_url)}`,
    `DTSTAMP:${utc(now)}`,
    `DTSTART:${utc(Date.parse(event.start))}`,
    ...(event.end ? [`DTEND:${utc(Date.parse(event.end))}`] : []),
    `SUMMARY:${text(event.title)}`,
    ...(event.location ? [`LOCATION:${text(event.location)}`] : []),
    ...(event.description ? [`DESCRIPTION:${text(event.description)}`] : []),
    `URL:${event.platform_url}`,
    ...(event.cover_url ? [`IMAGE;VALUE=URI:${event.cover_url}`] : []),
    'END:VEVENT',
    'END:VCALENDAR',
  ];
  return `${lines.map(fold).join('\r\n')}\r\n`;
}

/** A file name for the event: its title's words, at most 60 characters, then `.ics`. */
export function calendarFileName(event: WireEvent): string {
  const words = event.title
    .normalize('NFKD')
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
    .toLowerCase();
  return `${words || 'event'}.ics`;
}

function utc(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}

function text(value: string): string {
  return value
    .replace(/\\/g, '\\\\')
    .replace(/;/g, '\\;')
    .replace(/,/g, '\\,')
    .replace(/\r\n|\r|\n/g, '\\n');
}

/** Splits a content line into 75-octet pieces, never inside a UTF-8 character. */
function fold(line: string): string {
  const pieces: string[] = [];
  let piece = '';
  let octets = 0;
  for (const char of line) {
    const size = Buffer.byteLength(char);
    // Continuation lines start with a space, which counts against their 75 octets.
    const room = pieces.length === 0 ? 75 : 74;
    if (octets + size > room) {
      pieces.push(piece);
      piece = '';
      octets = 0;
    }
    piece += char;
    octets += size;
  }
  pieces.push(piece);
  return pieces.join('\r\n ');
}
