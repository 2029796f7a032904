// The rate limits and quotas: each an integer ≥ 1 (spec §8 and reference §11 set most of them).
import { integer, type SettingGroup } from './settings.ts';

function limit(env: string, fallback: number, description: string, group: SettingGroup = 'limits') {
  return integer({ env, group, default: fallback, min: 1, description });
}

export const LIMITS_SCHEMA = {
  anonymousPerMinute: limit(
    'LIMIT_ANONYMOUS_PER_MINUTE',
    120,
    'Anonymous requests and 401/403 rejections per IP per 60 s (spec §8).',
  ),
  tokenPerMinute: limit(
    'LIMIT_TOKEN_PER_MINUTE',
    1200,
    'Authenticated requests per token per 60 s (not set by the spec).',
  ),
  signupStartPerHour: limit(
    'LIMIT_SIGNUP_START_PER_HOUR',
    30,
    'Device-flow starts per IP per hour (spec §8).',
  ),
  codeEntriesPerMinute: limit(
    'LIMIT_CODE_ENTRIES_PER_MINUTE',
    10,
    'Device codes a member may enter on `/signup-with-agent` per 60 s, counted per member and per IP: ' +
      'enough for typos, far too few to guess a code.',
  ),
  oauthRegistrationsPerMinute: limit(
    'LIMIT_OAUTH_REGISTRATIONS_PER_MINUTE',
    10,
    'OAuth client registrations (`POST /oauth/register`, open to anyone) per IP per 60 s.',
  ),
  oauthAuthorizationsPerMinute: limit(
    'LIMIT_OAUTH_AUTHORIZATIONS_PER_MINUTE',
    30,
    'OAuth authorization requests (`GET /oauth/authorize`, each stored, some fetching a client metadata document) per IP per 60 s.',
  ),
  oauthCodeExchangesPerMinute: limit(
    'LIMIT_OAUTH_CODE_EXCHANGES_PER_MINUTE',
    30,
    'Authorization-code exchanges at `POST /oauth/token` per IP per 60 s.',
  ),
  feedbackPerHour: limit('LIMIT_FEEDBACK_PER_HOUR', 10, 'Feedback tickets per IP per hour (spec §8).'),
  highlightsPerDay: limit(
    'LIMIT_HIGHLIGHTS_PER_DAY',
    3,
    'New highlight submissions per token per UTC day (spec §8).',
  ),
  rsvpsPerDay: limit(
    'LIMIT_RSVPS_PER_DAY',
    10,
    'New RSVPs per token per UTC day (duplicates are free; reference §11).',
  ),
  bookingsPerDay: limit(
    'LIMIT_BOOKINGS_PER_DAY',
    10,
    'New booking requests per token (per member for a browser session) per UTC day (reference §11).',
  ),
  eventRequestsPerDay: limit(
    'LIMIT_EVENT_REQUESTS_PER_DAY',
    3,
    'Event proposals per member per UTC day, across all their tokens.',
  ),
  leaderboardOptInPerHour: limit(
    'LIMIT_LEADERBOARD_OPTIN_PER_HOUR',
    30,
    'Leaderboard opt-in changes per member per hour (not set by the spec).',
  ),
  operatorMutationsPerDay: limit(
    'LIMIT_OPERATOR_MUTATIONS_PER_DAY',
    20,
    'Confirmed operator decisions through the MCP/A2A operator tools per token per UTC day ' +
      '(reference §11); dry runs are free.',
  ),
  researchPerHour: limit(
    'LIMIT_RESEARCH_PER_HOUR',
    60,
    "`POST /api/research/ask` calls per member per hour, shared by all the member's tokens and " +
      'sessions (spec §8).',
    'research',
  ),
};
