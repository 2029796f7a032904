/** Time source injected everywhere a window, an expiry or a timestamp is computed. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  private current: number;
  constructor(current = Date.UTC(2026, 6, 16, 12, 0, 0)) {
    this.current = current;
  }
  now(): number {
    return this.current;
  }
  advance(ms: number): void {
    this.current += ms;
  }
  set(ms: number): void {
    this.current = ms;
  }
}

export const MS = { second: 1000, minute: 60_000, hour: 3_600_000, day: 86_400_000 } as const;

export function utcDayStart(ms: number): number {
  return ms - (ms % MS.day);
}

/** The last instant printed: an answer's times repeat within a millisecond under load. */
let lastMs = Number.NaN;
let lastIso = '';

export function iso(ms: number): string {
  if (ms !== lastMs) {
    // toISOString throws for an invalid date, as before; nothing is kept then.
    const text = new Date(ms).toISOString();
    lastMs = ms;
    lastIso = text;
  }
  return lastIso;
}
