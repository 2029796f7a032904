import type { PolicyOutcome } from '../../core/rate-limit.ts';

/** What queueing an RSVP or a booking answers: the queued job (the earlier one on a repeat) and its quota. */
export interface QueuedWrite {
  id: string;
  wasDup: boolean;
  rate: PolicyOutcome;
}
