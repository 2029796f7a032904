import { Type } from '@sinclair/typebox';
import { apiError } from '../../core/errors.ts';
import {
  bookingQuota,
  checkBookingWindow,
  PURPOSE_MAX,
  queueBooking,
} from '../../domain/resources/bookings.ts';
import { QueuedWriteSchema, queuedWriteResult } from '../queued-write.ts';
import { strictObject } from '../schemas.ts';
import { defineOperation, refusedWith } from '../types.ts';

const Input = strictObject({
  resource_id: Type.String({ minLength: 1, maxLength: 100 }),
  start_iso: Type.String({ format: 'date-time' }),
  end_iso: Type.String({ format: 'date-time' }),
  purpose: Type.Optional(
    Type.String({ maxLength: 4000, description: `Trimmed and clipped to ${PURPOSE_MAX} characters.` }),
  ),
  email: Type.Optional(
    Type.String({
      format: 'email',
      maxLength: 254,
      description:
        'Agent callers MUST supply it (400 email_required); a browser session may leave it out and the member’s address is used.',
    }),
  ),
});

export const bookResource = defineOperation<typeof Input.static, typeof QueuedWriteSchema.static>({
  id: 'bookResource',
  touches: (_input: unknown, body: { id?: string } | undefined) =>
    body?.id ? `booking:${body.id}` : undefined,
  method: 'POST',
  path: '/api/resources/book',
  tag: 'resources',
  summary: 'Request a booking of a room or printer (queued)',
  description:
    'Queues a booking request and answers 202: queued, not confirmed. The calendar decides it shortly; booking_confirmed or booking_declined (with a reason) arrives in the member’s event log. A repeat of the exact same start time within 30 days is recognised (was_dup). Agents must send email. 10 per token per UTC day.',
  mcpTool: 'ic_resources_book',
  credential: 'bearer_or_session',
  scope: 'resources:book',
  sandbox: 'simulated',
  idempotent: true,
  agentRequired: ['email'],
  quotas: (deps) => [bookingQuota(deps)],
  bodyLimit: 8 * 1024,
  inputFrom: 'body',
  input: Input,
  output: QueuedWriteSchema,
  successStatus: 202,
  errors: [
    {
      status: 400,
      description: 'Invalid body; email missing for an agent; end before start; start in the past',
    },
    { status: 401, description: 'Missing or invalid credential' },
    { status: 403, description: 'Token lacks resources:book, or the tier no longer grants it' },
    refusedWith(['unknown_resource'], 'Unknown or unbookable resource'),
    { status: 413, description: 'Body larger than 8 KB' },
    { status: 429, description: 'Daily limit reached' },
  ],
  async handler({ input, principal, deps, now }) {
    if (principal.kind === 'bearer' && input.email === undefined)
      throw apiError('email_required', { extra: { field: 'email' } });
    const start = Date.parse(input.start_iso);
    const end = Date.parse(input.end_iso);
    checkBookingWindow(start, end, now);
    const write = await queueBooking(deps, {
      resourceId: input.resource_id,
      memberId: principal.member.id,
      tokenId: principal.kind === 'bearer' ? principal.token.id : null,
      start,
      end,
      purpose: (input.purpose ?? '').trim().slice(0, PURPOSE_MAX),
      email: input.email ?? principal.member.email,
    });
    return queuedWriteResult(
      write,
      principal,
      write.wasDup
        ? 'A request for this resource at this start time was already made in the last 30 days; nothing new was queued.'
        : 'Queued; booking_confirmed or booking_declined will appear in the event log.',
    );
  },
});
