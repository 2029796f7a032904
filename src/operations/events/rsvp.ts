import { Type } from '@sinclair/typebox';
import { apiError } from '../../core/errors.ts';
import { findEventByUrl, resolveEventUrl } from '../../domain/events/events.ts';
import { queueRsvp, rsvpQuota } from '../../domain/events/rsvps.ts';
import { QueuedWriteSchema, queuedWriteResult } from '../queued-write.ts';
import { strictObject } from '../schemas.ts';
import { defineOperation, refusedWith } from '../types.ts';

const Input = strictObject({
  event_url: Type.String({ minLength: 1, maxLength: 2000, description: 'The event-platform URL.' }),
  email: Type.Optional(
    Type.String({ format: 'email', maxLength: 254, description: 'Defaults to the member’s.' }),
  ),
  name: Type.Optional(
    Type.String({ minLength: 1, maxLength: 200, description: 'Defaults to the member’s.' }),
  ),
});

export const rsvpToEvent = defineOperation<typeof Input.static, typeof QueuedWriteSchema.static>({
  id: 'rsvpToEvent',
  touches: (input: { event_url: string }) => `event:${input.event_url}`,
  method: 'POST',
  path: '/api/events/rsvp',
  tag: 'events',
  summary: 'RSVP to an event (queued)',
  description:
    'Queues an RSVP for delivery to the event platform and answers 202: queued, not confirmed. The confirmation arrives as rsvp_confirmed in the member’s event log. A repeat for the same event within 7 days is recognised (was_dup) and spends nothing; a withdrawn RSVP (POST /api/events/rsvp/cancel) is not. 10 per token per UTC day; from a browser session (the event page), 10 per member.',
  mcpTool: 'ic_events_rsvp',
  credential: 'bearer_or_session',
  scope: 'events:rsvp',
  sandbox: 'simulated',
  idempotent: true,
  quotas: (deps) => [rsvpQuota(deps)],
  bodyLimit: 8 * 1024,
  inputFrom: 'body',
  input: Input,
  output: QueuedWriteSchema,
  successStatus: 202,
  errors: [
    { status: 400, description: 'Invalid body, or the URL is not on the event platform' },
    { status: 401, description: 'Missing or invalid credential' },
    { status: 403, description: 'Token lacks events:rsvp, or the tier no longer grants it' },
    refusedWith(['event_not_found'], 'The event is not in the upcoming-events cache'),
    { status: 413, description: 'Body larger than 8 KB' },
    { status: 429, description: 'Per-token daily limit reached' },
  ],
  async handler({ input, principal, deps }) {
    const eventUrl = resolveEventUrl(deps.config, input.event_url);
    if (!eventUrl)
      throw apiError('non_canonical_url', { subject: 'event_url', hosts: deps.config.eventUrlHosts });
    if (!(await findEventByUrl(deps.db, eventUrl))) throw apiError('event_not_found');
    const write = await queueRsvp(deps, {
      eventUrl,
      memberId: principal.member.id,
      tokenId: principal.kind === 'bearer' ? principal.token.id : null,
      email: input.email ?? principal.member.email,
      name: input.name ?? principal.member.name,
    });
    return queuedWriteResult(
      write,
      principal,
      write.wasDup
        ? 'Already RSVPed to this event in the last 7 days; nothing new was queued.'
        : 'Queued for delivery to the event platform; rsvp_confirmed will appear in the event log.',
    );
  },
});
