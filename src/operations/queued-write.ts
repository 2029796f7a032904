import { Type } from '@sinclair/typebox';
import { rateInfo } from '../core/rate-limit.ts';
import type { Principal } from '../domain/auth/principal.ts';
import { viaOf } from '../domain/auth/principal.ts';
import type { QueuedWrite } from '../domain/queue/queued-write.ts';
import { RateInfoSchema, Via } from './schemas.ts';
import type { OperationResult } from './types.ts';

/** The shared shape of the queue-and-forget writes, RSVP and book (spec 2.6). */
export const QueuedWriteSchema = Type.Object({
  ok: Type.Boolean(),
  queued: Type.Boolean({ description: 'Queued, not confirmed: the outcome arrives in the event log.' }),
  was_dup: Type.Boolean({ description: 'True when recognized as a duplicate of an earlier request.' }),
  id: Type.String({ description: 'The queued request (the earlier one when was_dup).' }),
  rate: RateInfoSchema,
  via: Via,
  note: Type.String(),
});

export function queuedWriteResult(
  write: QueuedWrite,
  principal: Principal,
  note: string,
): OperationResult<typeof QueuedWriteSchema.static> {
  return {
    rate: [write.rate],
    body: {
      ok: true,
      queued: true,
      was_dup: write.wasDup,
      id: write.id,
      rate: rateInfo(write.rate),
      via: viaOf(principal),
      note,
    },
  };
}
