import { Type } from '@sinclair/typebox';

/** Event (spec 2.12). */
export const EventSchema = Type.Object(
  {
    platform_url: Type.String({ description: 'The canonical event-platform URL.' }),
    title: Type.String(),
    start: Type.String({ format: 'date-time' }),
    end: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    location: Type.Union([Type.String(), Type.Null()]),
    cover_url: Type.Union([Type.String(), Type.Null()]),
    description: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'Event' },
);
