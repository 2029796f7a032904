import { Type } from '@sinclair/typebox';
import { apiError } from '../../core/errors.ts';
import { viaOf } from '../../domain/auth/principal.ts';
import { eventRequestQuota, proposeEvent } from '../../domain/events/proposals.ts';
import { strictObject, Via } from '../schemas.ts';
import { defineOperation } from '../types.ts';

const text = (max: number) => Type.Optional(Type.String({ maxLength: max }));
const url = Type.Optional(Type.String({ format: 'uri', maxLength: 2000, pattern: '^https?://' }));

const Input = strictObject({
  title: Type.String({ minLength: 1, maxLength: 200 }),
  start: Type.String({ format: 'date-time', description: 'Must be in the future.' }),
  end: Type.Optional(Type.String({ format: 'date-time' })),
  location: text(300),
  description: text(4000),
  cover_url: url,
  capacity: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
  visibility: Type.Optional(Type.Union([Type.Literal('public'), Type.Literal('members')])),
  host: text(200),
  contact: text(300),
  slideshow_url: url,
});

const Output = Type.Object({
  ok: Type.Boolean(),
  id: Type.String(),
  status: Type.Literal('pending'),
  via: Via,
});

export const requestEvent = defineOperation<typeof Input.static, typeof Output.static>({
  id: 'requestEvent',
  method: 'POST',
  path: '/api/events/request',
  tag: 'events',
  summary: 'Propose a member event',
  description:
    'Files a proposal for operator review; it is never published automatically. Agents send it with a token; members fill in the same proposal at /events/propose. event_request_approved (with the published event’s URL) or event_request_declined arrives in the member’s event log.',
  mcpTool: 'ic_events_request',
  credential: 'bearer_or_session',
  scope: 'events:request',
  sandbox: 'simulated',
  idempotent: true,
  quotas: (deps) => [eventRequestQuota(deps)],
  bodyLimit: 16 * 1024,
  inputFrom: 'body',
  input: Input,
  output: Output,
  successStatus: 202,
  errors: [
    { status: 400, description: 'Invalid body; start not in the future; end before start' },
    { status: 401, description: 'Missing or invalid credential' },
    { status: 403, description: 'Token lacks events:request, or the tier no longer grants it' },
    { status: 413, description: 'Body larger than 16 KB' },
    { status: 429, description: 'Per-member daily limit reached' },
  ],
  async handler({ input, principal, deps, now }) {
    const start = Date.parse(input.start);
    if (start <= now) throw apiError('start_in_past', { field: 'start' });
    if (input.end !== undefined && Date.parse(input.end) <= start)
      throw apiError('invalid_time_range', { start: 'start', end: 'end' });
    const tokenId = principal.kind === 'bearer' ? principal.token.id : null;
    const { id, rate } = await proposeEvent(deps, principal.member.id, tokenId, input);
    return { rate: [rate], body: { ok: true, id, status: 'pending', via: viaOf(principal) } };
  },
});
