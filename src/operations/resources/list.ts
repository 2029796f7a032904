import { Type } from '@sinclair/typebox';
import { viaOf } from '../../domain/auth/principal.ts';
import { listResources as list } from '../../domain/resources/resources.ts';
import { strictObject, Via } from '../schemas.ts';
import { defineOperation } from '../types.ts';

const Interval = Type.Object({
  start: Type.String({ format: 'date-time' }),
  end: Type.String({ format: 'date-time' }),
});

const Resource = Type.Object({
  id: Type.String(),
  kind: Type.String({ description: 'room or printer (or another kind the operator defined).' }),
  name: Type.String(),
  capacity: Type.Integer({ description: 'People (rooms) or jobs (printers) at once.' }),
  open_hours: Type.Object(
    { weekdays: Type.String(), weekends: Type.String() },
    { description: 'HH:MM-HH:MM in UTC, or closed.' },
  ),
  bookable: Type.Boolean(),
  busy: Type.Array(Interval, { description: 'Confirmed bookings in the next 7 days.' }),
  queued_requests: Type.Integer({ description: 'Booking requests not yet decided.' }),
});

const Output = Type.Object({
  ok: Type.Boolean(),
  resources: Type.Array(Resource),
  as_of: Type.String({ format: 'date-time' }),
  queue: Type.Object({
    queued: Type.Integer(),
    oldest_queued_age_s: Type.Union([Type.Integer(), Type.Null()]),
  }),
  stale: Type.Boolean({
    description: 'Staleness gauge: true when a booking request has waited over 5 minutes to be decided.',
  }),
  via: Via,
});

export const listResources = defineOperation<Record<string, never>, typeof Output.static>({
  id: 'listResources',
  method: 'GET',
  path: '/api/resources/list',
  tag: 'resources',
  summary: 'List rooms and printers with availability',
  description:
    'Every resource with its opening hours, confirmed bookings of the next 7 days and the state of the booking queue.',
  mcpTool: 'ic_resources_list',
  credential: 'bearer_or_session',
  scope: 'resources:read',
  sandbox: 'real',
  idempotent: false,
  inputFrom: 'query',
  input: strictObject({}),
  output: Output,
  successStatus: 200,
  errors: [
    { status: 401, description: 'Missing or invalid token' },
    { status: 403, description: 'Token lacks resources:read, or the tier no longer grants it' },
  ],
  async handler({ principal, deps }) {
    return { body: { ok: true, ...(await list(deps)), via: viaOf(principal) } };
  },
});
