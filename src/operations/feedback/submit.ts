import { Type } from '@sinclair/typebox';
import { iso } from '../../clock.ts';
import { apiError, errors } from '../../core/errors.ts';
import { FEEDBACK_CATEGORIES, type FeedbackCategory, fileFeedback } from '../../domain/feedback/feedback.ts';
import { sanitizeText } from '../../domain/feedback/sanitize.ts';
import { defineOperation } from '../types.ts';

const Category = Type.Union(FEEDBACK_CATEGORIES.map((c) => Type.Literal(c)));
const Short = (description?: string) => Type.Optional(Type.String({ maxLength: 500, description }));

const KNOWN_FIELDS = [
  'message',
  'url',
  'expected',
  'got',
  'category',
  'kind',
  'priority',
  'agent_id',
  'contact',
];

const Input = Type.Object(
  {
    message: Type.String({ minLength: 1, maxLength: 2000 }),
    url: Short('The URL the report is about.'),
    expected: Short(),
    got: Short(),
    category: Type.Optional(
      Type.String({
        maxLength: 500,
        description: `One of ${FEEDBACK_CATEGORIES.join(', ')}; free text when kind carries the class.`,
      }),
    ),
    kind: Type.Optional(Category),
    priority: Type.Optional(Type.Union([Type.Literal('low'), Type.Literal('normal'), Type.Literal('high')])),
    agent_id: Short(),
    contact: Short(),
  },
  { additionalProperties: true },
);

const Output = Type.Object({
  ok: Type.Boolean(),
  ticket_id: Type.String(),
  received_at: Type.String({ format: 'date-time' }),
  authenticated: Type.Boolean(),
  message: Type.String(),
  warnings: Type.Array(Type.String()),
});

export const submitFeedback = defineOperation<typeof Input.static, typeof Output.static>({
  id: 'submitFeedback',
  method: 'POST',
  path: '/api/agent/feedback',
  tag: 'feedback',
  summary: 'Report feedback or a documentation mismatch',
  description:
    'Anonymous allowed (10 per IP per hour). A bearer with feedback:submit attributes the ticket to the member; an invalid bearer is treated as anonymous. The class is `kind` when present (then `category` may be free text), otherwise `category`. The ticket files even when warnings are returned.',
  mcpTool: 'ic_feedback_submit',
  credential: 'optional_bearer',
  scope: 'feedback:submit',
  sandbox: 'real',
  idempotent: false,
  rateLimits: (deps) => [
    { name: 'feedback', limit: deps.config.limits.feedbackPerHour, window: 3600, per: 'ip' },
  ],
  // Reference §2: stored feedback text is sanitized (C0 controls, NUL included, are stripped).
  stripsControlCharacters: true,
  bodyLimit: 16 * 1024,
  inputFrom: 'body',
  input: Input,
  output: Output,
  successStatus: 201,
  errors: [
    { status: 400, description: 'Invalid JSON, missing message, or an unknown category' },
    { status: 413, description: 'Body too large' },
    { status: 429, description: 'More than 10 tickets per IP per hour' },
  ],
  async handler({ input, principal, deps, request }) {
    // What is stored is the sanitized text; a message with nothing visible in it is a missing message.
    if (sanitizeText(input.message) === '') {
      throw errors.validation('message is required and must contain visible text', { field: 'message' });
    }
    let category: FeedbackCategory;
    let categoryText: string | undefined;
    if (input.kind) {
      category = input.kind;
      categoryText = input.category;
    } else if (input.category === undefined) {
      category = 'other';
    } else if ((FEEDBACK_CATEGORIES as readonly string[]).includes(input.category)) {
      category = input.category as FeedbackCategory;
    } else {
      throw apiError('invalid_category', {
        categories: FEEDBACK_CATEGORIES,
        extra: { field: 'category', valid_kinds: FEEDBACK_CATEGORIES },
      });
    }
    const warnings: string[] = [];
    const ignored = Object.keys(input).filter((k) => !KNOWN_FIELDS.includes(k));
    if (ignored.length) warnings.push(`ignored unknown fields: ${ignored.join(', ')}`);
    let attribution: { memberId: string; tokenId: string } | undefined;
    if (principal.kind === 'bearer') {
      if (
        principal.token.scopes.includes('feedback:submit') &&
        deps.tiers.grants(principal.member.tier, 'feedback:submit')
      ) {
        attribution = { memberId: principal.member.id, tokenId: principal.token.id };
      } else {
        warnings.push('the token lacks feedback:submit, so the ticket is filed anonymously.');
      }
    }
    const ticket = await fileFeedback(
      deps,
      {
        message: input.message,
        category,
        categoryText,
        priority: input.priority ?? 'normal',
        url: input.url,
        expected: input.expected,
        got: input.got,
        agentId: input.agent_id,
        contact: input.contact,
      },
      request.ip,
      attribution,
      warnings,
    );
    return {
      body: {
        ok: true,
        ticket_id: ticket.ticket_id,
        received_at: iso(ticket.created_at),
        authenticated: attribution !== undefined,
        message: 'Thanks: the ticket is filed and a human will read it.',
        warnings: JSON.parse(ticket.warnings) as string[],
      },
    };
  },
});
