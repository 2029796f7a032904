import { MS, utcDayStart } from '../../clock.ts';

/** An ISO week: Monday 00:00 UTC up to (not including) the next Monday. */
export interface Week {
  start: number;
  end: number;
}

export function isoWeekOf(ms: number): Week {
  const daysSinceMonday = (new Date(ms).getUTCDay() + 6) % 7;
  const start = utcDayStart(ms) - daysSinceMonday * MS.day;
  return { start, end: start + 7 * MS.day };
}
