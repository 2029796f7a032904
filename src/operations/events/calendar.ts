import { Type } from '@sinclair/typebox';
import { apiError } from '../../core/errors.ts';
import { calendarFileName, eventCalendarFile } from '../../domain/events/calendar-file.ts';
import { lookupEvent, resolveEventUrl, type WireEvent } from '../../domain/events/events.ts';
import { strictObject } from '../schemas.ts';
import { defineOperation, refusedWith } from '../types.ts';

const Input = strictObject({
  url: Type.String({
    minLength: 1,
    maxLength: 2000,
    description: 'The event’s URL (the event platform’s, or a member event’s page here).',
  }),
});

const Output = Type.Object({
  ok: Type.Boolean(),
  filename: Type.String({ description: 'A file name for it, ending in .ics.' }),
  content_type: Type.Literal('text/calendar; charset=utf-8'),
  ics: Type.String({ description: 'The iCalendar (RFC 5545) file: one VEVENT, times in UTC.' }),
});

export const getEventCalendar = defineOperation<typeof Input.static, typeof Output.static>({
  id: 'getEventCalendar',
  method: 'GET',
  path: '/api/events/calendar',
  tag: 'events',
  summary: 'One event as an iCalendar (.ics) file',
  description:
    'The event as a calendar file to add to the member’s calendar: one VEVENT whose UID is the event’s canonical URL. The event page links the same file as /events/…/calendar.ics.',
  mcpTool: 'ic_events_calendar',
  credential: 'public',
  sandbox: 'real',
  idempotent: false,
  inputFrom: 'query',
  input: Input,
  output: Output,
  successStatus: 200,
  errors: [
    { status: 400, description: 'url missing, or not an event URL this service knows' },
    refusedWith(['event_not_found'], 'No such event in the cache'),
  ],
  async handler({ input, deps, now }) {
    const canonical = resolveEventUrl(deps.config, input.url);
    if (!canonical)
      throw apiError('non_canonical_url', {
        subject: 'The URL',
        hosts: deps.config.eventUrlHosts,
        extra: { accepted_hosts: deps.config.eventUrlHosts },
      });
    const event: WireEvent | undefined = await lookupEvent(deps, canonical);
    if (!event) throw apiError('event_not_found');
    return {
      body: {
        ok: true,
        filename: calendarFileName(event),
        content_type: 'text/calendar; charset=utf-8',
        ics: eventCalendarFile(event, now, `-//agent-commons//${deps.config.publicUrl}//EN`),
      },
    };
  },
});
