import { MS } from '../../clock.ts';

/**
 * Opening hours of a resource, in UTC: `HH:MM-HH:MM` for weekdays and for weekends, or `closed`.
 * A booking must start and end inside one day's opening window.
 */
export interface OpeningHours {
  weekdays: string;
  weekends: string;
}

export const ALWAYS_OPEN: OpeningHours = { weekdays: '00:00-24:00', weekends: '00:00-24:00' };

const WINDOW = /^([01]\d|2[0-4]):([0-5]\d)-([01]\d|2[0-4]):([0-5]\d)$/;

export function isWindow(value: string): boolean {
  return value === 'closed' || WINDOW.test(value);
}

export function parseOpeningHours(json: string): OpeningHours {
  try {
    const value = JSON.parse(json) as Partial<OpeningHours>;
    if (typeof value.weekdays === 'string' && typeof value.weekends === 'string')
      return { weekdays: value.weekdays, weekends: value.weekends };
  } catch {
    // fall through: unreadable hours mean no restriction was recorded
  }
  return ALWAYS_OPEN;
}

/** The opening window (epoch ms) of the UTC day containing `at`, or undefined when closed. */
export function openWindowOn(hours: OpeningHours, at: number): { from: number; to: number } | undefined {
  const dayStart = at - (at % MS.day);
  const weekday = new Date(dayStart).getUTCDay();
  const window = weekday === 0 || weekday === 6 ? hours.weekends : hours.weekdays;
  const match = WINDOW.exec(window);
  if (!match) return undefined;
  const from = dayStart + Number(match[1]) * MS.hour + Number(match[2]) * MS.minute;
  const to = dayStart + Number(match[3]) * MS.hour + Number(match[4]) * MS.minute;
  return to > from ? { from, to } : undefined;
}

export function fitsOpeningHours(hours: OpeningHours, start: number, end: number): boolean {
  const window = openWindowOn(hours, start);
  return window !== undefined && start >= window.from && end <= window.to;
}
