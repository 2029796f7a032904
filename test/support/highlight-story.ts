/** A highlight story in the reference shape, with the given id. */
export function story(id: string, extra: Record<string, unknown> = {}) {
  return {
    id,
    member_name: 'Ada Example',
    member_id: 'm_ada',
    action: 'spoke',
    event_title: 'Community meetup',
    event_url: 'https://events.example.org/meetup-42',
    date: '2026-07-16',
    dek: 'Ada gave a talk about tidy databases.',
    stats: [
      { label: 'attendees', value: 40 },
      { label: 'slides', value: 'twelve' },
    ],
    images: ['https://images.example.org/ada.jpg'],
    ...extra,
  };
}
