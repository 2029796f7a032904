import { Type } from '@sinclair/typebox';
import { apiError } from '../../core/errors.ts';
import { lookupEvent, resolveEventUrl, type WireEvent } from '../../domain/events/events.ts';
import { answerOf } from '../../http/serialized-answers.ts';
import { strictObject } from '../schemas.ts';
import { defineOperation, refusedWith } from '../types.ts';
import { EventSchema } from './event-schema.ts';

const Input = strictObject({
  url: Type.Optional(Type.String({ minLength: 1, maxLength: 2000, description: 'The event-platform URL.' })),
  luma: Type.Optional(Type.String({ minLength: 1, maxLength: 2000, description: 'Alias of url.' })),
});

const Output = Type.Object({ ok: Type.Boolean(), event: EventSchema });

export const getEvent = defineOperation<{ url: string }, typeof Output.static>({
  id: 'getEvent',
  touches: (input: { url?: string; luma?: string }) => {
    const url = input.url ?? input.luma;
    return url ? `event:${url}` : undefined;
  },
  method: 'GET',
  path: '/api/events/get',
  tag: 'events',
  summary: 'Look up one event by its event-platform URL',
  description:
    'Resolves an event from the upcoming-events cache. Either of the platform’s two URL host forms is accepted; the answer carries the canonical one.',
  mcpTool: 'ic_events_get',
  credential: 'public',
  sandbox: 'real',
  idempotent: false,
  batchable: true,
  inputFrom: 'query',
  input: Input,
  refineInput: (input: { url?: string; luma?: string }) => {
    const url = input.url ?? input.luma;
    if (url === undefined) throw apiError('missing_url');
    return { url };
  },
  output: Output,
  successStatus: 200,
  errors: [
    { status: 400, description: 'url missing, or not on one of the event platform’s hosts' },
    refusedWith(['event_not_found'], 'No such event in the cache'),
  ],
  // Not async: an event of the reused upcoming list is answered at once (see lookupEvent).
  handler({ input, deps }) {
    const hosts = deps.config.eventUrlHosts;
    const canonical = resolveEventUrl(deps.config, input.url);
    if (!canonical)
      throw apiError('non_canonical_url', { subject: 'The URL', hosts, extra: { accepted_hosts: hosts } });
    const event = lookupEvent(deps, canonical);
    return event instanceof Promise ? event.then(answerWith) : answerWith(event);
  },
});

function answerWith(event: WireEvent | undefined) {
  if (!event) throw apiError('event_not_found');
  // Events of the reused upcoming list are the same objects until the list is read again.
  return answerOf(event, () => ({ ok: true, event }));
}
