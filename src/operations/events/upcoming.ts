import { Type } from '@sinclair/typebox';
import { listUpcoming, type UpcomingList } from '../../domain/events/events.ts';
import { answerOf } from '../../http/serialized-answers.ts';
import { strictObject } from '../schemas.ts';
import { defineOperation } from '../types.ts';
import { EventSchema } from './event-schema.ts';

const Input = strictObject({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: '1 to 100 (default 20).' })),
});

const Output = Type.Object({
  ok: Type.Boolean(),
  events: Type.Array(EventSchema),
  count: Type.Integer(),
  age_min: Type.Union([Type.Integer(), Type.Null()], {
    description: 'Minutes since the cache was last refreshed from the event platform (null: never).',
  }),
  stale: Type.Boolean({ description: 'True when the cache is older than 90 minutes.' }),
});

export const listUpcomingEvents = defineOperation<typeof Input.static, typeof Output.static>({
  id: 'listUpcomingEvents',
  method: 'GET',
  path: '/api/events/upcoming',
  tag: 'events',
  summary: 'List upcoming community events',
  description:
    'Events that have not ended, soonest first, from the cache fed by the community’s event platform. Anonymous callers are welcome; an agent token (events:read_upcoming) is charged to the token instead of the IP.',
  mcpTool: 'ic_events_list_upcoming',
  credential: 'optional_bearer',
  scope: 'events:read_upcoming',
  sandbox: 'real',
  idempotent: false,
  batchable: true,
  inputFrom: 'query',
  input: Input,
  output: Output,
  successStatus: 200,
  errors: [{ status: 400, description: 'limit out of range' }],
  handler({ input, deps }) {
    // While the list is reused it comes back as it is, and so does its answer: not as a promise.
    const list = listUpcoming(deps, input.limit ?? 20);
    return list instanceof Promise ? list.then(answerFor) : answerFor(list);
  },
});

function answerFor(list: UpcomingList) {
  return answerOf(list, () => ({
    ok: true,
    events: list.events,
    count: list.events.length,
    age_min: list.ageMinutes,
    stale: list.stale,
  }));
}
