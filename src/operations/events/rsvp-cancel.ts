import { Type } from '@sinclair/typebox';
import { apiError } from '../../core/errors.ts';
import { viaOf } from '../../domain/auth/principal.ts';
import { resolveEventUrl } from '../../domain/events/events.ts';
import { cancelRsvp } from '../../domain/events/rsvps.ts';
import { strictObject, Via } from '../schemas.ts';
import { defineOperation } from '../types.ts';

const Input = strictObject({
  event_url: Type.String({ minLength: 1, maxLength: 2000, description: 'The event-platform URL.' }),
});

const Output = Type.Object({
  ok: Type.Boolean(),
  event_url: Type.String({ description: 'The canonical URL of the event.' }),
  cancelled: Type.Integer({ description: 'RSVPs withdrawn by this call (0: there was none to withdraw).' }),
  via: Via,
  note: Type.String(),
});

export const cancelRsvpToEvent = defineOperation<typeof Input.static, typeof Output.static>({
  id: 'cancelRsvp',
  method: 'POST',
  path: '/api/events/rsvp/cancel',
  tag: 'events',
  summary: 'Withdraw the member’s RSVP to an event',
  description:
    'Withdraws the member’s queued or confirmed RSVPs to the event: a queued one is never delivered, and a later RSVP to the event is a new one (it spends the daily RSVP quota again). Repeating it changes nothing (cancelled: 0). A confirmed RSVP already delivered to the event platform is withdrawn here only: the platform is not told.',
  mcpTool: 'ic_events_rsvp_cancel',
  credential: 'bearer_or_session',
  scope: 'events:rsvp',
  sandbox: 'simulated',
  idempotent: true,
  effect: 'destructive',
  repeatable: true,
  bodyLimit: 8 * 1024,
  inputFrom: 'body',
  input: Input,
  output: Output,
  successStatus: 200,
  errors: [
    { status: 400, description: 'Invalid body, or the URL is not an event URL this service knows' },
    { status: 401, description: 'Missing or invalid credential' },
    { status: 403, description: 'Token lacks events:rsvp, or the tier no longer grants it' },
    { status: 413, description: 'Body larger than 8 KB' },
  ],
  async handler({ input, principal, deps }) {
    const eventUrl = resolveEventUrl(deps.config, input.event_url);
    if (!eventUrl)
      throw apiError('non_canonical_url', { subject: 'event_url', hosts: deps.config.eventUrlHosts });
    const cancelled = await cancelRsvp(deps, principal.member.id, eventUrl);
    return {
      body: {
        ok: true,
        event_url: eventUrl,
        cancelled,
        via: viaOf(principal),
        note: cancelled ? 'RSVP withdrawn.' : 'No queued or confirmed RSVP to this event; nothing changed.',
      },
    };
  },
});
