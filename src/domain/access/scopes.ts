/**
 * How much a scope lets an agent do, shown beside it wherever a person grants or reviews one:
 * `low` reads, `medium` acts in the member's name, `high` decides for others (operators).
 */
export type ScopeRisk = 'low' | 'medium' | 'high';

export const RISK_WORDS: Record<ScopeRisk, string> = {
  low: 'Low risk: reads only',
  medium: 'Medium risk: acts for you',
  high: 'High risk: decides for others',
};

/**
 * Every scope a token can carry, declared once: the sentence shown to the human who grants it and
 * its risk. The discovery documents, the approval and consent pages and the agent console read it.
 */
export const SCOPES = {
  'read:public': { description: 'Read public community information.', risk: 'low' },
  'membership:read': {
    description: "Read the member's own membership, tier and agent activity.",
    risk: 'low',
  },
  'membership:write': {
    description: "Change the member's own membership settings and tier requests.",
    risk: 'medium',
  },
  'feedback:submit': {
    description: 'File feedback and breakage reports attributed to the member.',
    risk: 'medium',
  },
  'events:read_upcoming': { description: 'List upcoming community events.', risk: 'low' },
  'events:rsvp': { description: 'RSVP to events on behalf of the member.', risk: 'medium' },
  'directory:search': { description: 'Search the member directory.', risk: 'medium' },
  'resources:read': { description: 'List rooms and printers and their availability.', risk: 'low' },
  'research:query': { description: 'Query the research corpus.', risk: 'low' },
  'resources:book': { description: 'Book rooms and printers.', risk: 'medium' },
  'events:submit_recap': { description: 'Submit event highlights for moderation.', risk: 'medium' },
  'events:request': { description: 'Propose member events for operator approval.', risk: 'medium' },
  'leaderboard:manage': { description: 'Opt in to or out of the commit leaderboard.', risk: 'medium' },
  'admin:tier_review': { description: 'Review tier requests (operators).', risk: 'high' },
  'admin:highlights_review': { description: 'Moderate highlight submissions (operators).', risk: 'high' },
  'admin:events_review': { description: 'Review event proposals (operators).', risk: 'high' },
  'admin:feedback_review': { description: 'Triage feedback (operators).', risk: 'high' },
} as const satisfies Record<string, { description: string; risk: ScopeRisk }>;

export type Scope = keyof typeof SCOPES;

export const ALL_SCOPES = Object.keys(SCOPES) as Scope[];

/** Each scope's sentence alone (the discovery documents' shape). */
export const SCOPE_CATALOG = Object.fromEntries(
  ALL_SCOPES.map((scope) => [scope, SCOPES[scope].description]),
) as {
  [S in Scope]: (typeof SCOPES)[S]['description'];
};

/** Each scope's risk alone. */
export const SCOPE_RISK = Object.fromEntries(
  ALL_SCOPES.map((scope) => [scope, SCOPES[scope].risk]),
) as Record<Scope, ScopeRisk>;

export function isScope(value: string): value is Scope {
  return Object.hasOwn(SCOPE_CATALOG, value);
}

/** The starter sets the spec names (§5.7), offered to agents as ready-made requests. */
export const STARTER_SET_NAMES: Record<string, string> = {
  read_only: 'Read only',
  events_and_rsvp: 'Events and RSVP',
  submit_a_highlight: 'Submit a highlight',
};

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
