/** Every scope a token can carry, with the sentence shown to the human who grants it. */
export const SCOPE_CATALOG = {
  'read:public': 'Read public community information.',
  'membership:read': "Read the member's own membership, tier and agent activity.",
  'membership:write': "Change the member's own membership settings and tier requests.",
  'feedback:submit': 'File feedback and breakage reports attributed to the member.',
  'events:read_upcoming': 'List upcoming community events.',
  'events:rsvp': 'RSVP to events on behalf of the member.',
  'directory:search': 'Search the member directory.',
  'resources:read': 'List rooms and printers and their availability.',
  'research:query': 'Query the research corpus.',
  'resources:book': 'Book rooms and printers.',
  'events:submit_recap': 'Submit event highlights for moderation.',
  'events:request': 'Propose member events for operator approval.',
  'leaderboard:manage': 'Opt in to or out of the commit leaderboard.',
  'admin:tier_review': 'Review tier requests (operators).',
  'admin:highlights_review': 'Moderate highlight submissions (operators).',
  'admin:events_review': 'Review event proposals (operators).',
  'admin:feedback_review': 'Triage feedback (operators).',
} as const;

export type Scope = keyof typeof SCOPE_CATALOG;

export const ALL_SCOPES = Object.keys(SCOPE_CATALOG) as Scope[];

export function isScope(value: string): value is Scope {
  return Object.hasOwn(SCOPE_CATALOG, value);
}

/** The starter sets the spec names (§5.7), offered to agents as ready-made requests. */
export const STARTER_SCOPE_SETS: Record<string, Scope[]> = {
  read_only: ['read:public', 'membership:read'],
  events_and_rsvp: ['read:public', 'membership:read', 'events:read_upcoming', 'events:rsvp'],
  submit_a_highlight: [
    'read:public',
    'membership:read',
    'events:read_upcoming',
    'events:rsvp',
    'events:submit_recap',
    'directory:search',
  ],
};
