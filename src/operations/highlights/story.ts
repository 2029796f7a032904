import { Type } from '@sinclair/typebox';

const HttpUrl = Type.String({ maxLength: 2000, pattern: '^https?://[^\\s]+$' });

/**
 * The story fields agents use (reference §2); other fields are kept as sent. Only what the contract
 * needs is checked (the id, sizes, types): agents written for the reference service send display
 * forms (a `date` of "MAY 08", a numeric `member_id`, a boolean stat), and a payload the reference
 * accepts is never refused here.
 */
export const HighlightStorySchema = Type.Object(
  {
    id: Type.String({
      minLength: 1,
      maxLength: 160,
      pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$',
      description:
        'Stable story id, e.g. YYYY-MM-DD-<member>-<event>. Resubmitting it refreshes the pending record.',
    }),
    member_name: Type.Optional(Type.String({ maxLength: 120 })),
    member_id: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), Type.Number()])),
    action: Type.Optional(Type.String({ maxLength: 64 })),
    event_title: Type.Optional(Type.String({ maxLength: 300 })),
    event_url: Type.Optional(HttpUrl),
    date: Type.Optional(
      Type.String({
        maxLength: 64,
        description: 'As the story shows it: "2026-07-16", "MAY 08", "May 8, 2026" are all kept as sent.',
      }),
    ),
    dek: Type.Optional(Type.String({ maxLength: 800 })),
    stats: Type.Optional(
      Type.Array(
        Type.Object({
          label: Type.String({ maxLength: 80 }),
          value: Type.Union([Type.String({ maxLength: 200 }), Type.Number(), Type.Boolean(), Type.Null()]),
        }),
        { maxItems: 20 },
      ),
    ),
    images: Type.Optional(
      Type.Array(HttpUrl, { maxItems: 20, description: 'Image URLs; never inline data.' }),
    ),
  },
  { additionalProperties: true, $id: 'HighlightStory' },
);

export const HighlightPendingRequest = Type.Object(
  {
    id: Type.Optional(Type.String({ description: 'Story id (when the story is sent at the top level).' })),
    story: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'The story, wrapped.' })),
  },
  {
    additionalProperties: true,
    description: 'Either a HighlightStory at the top level, or an object wrapping it under `story`.',
  },
);
