// How long each kind of record is kept before the retention sweep (src/domain/retention/sweep.ts)
// deletes it: a number of days, or `keep` (also `0`) for no limit. The defaults and why they were
// chosen: docs/decisions.md ("Retention windows").
import { integer, refuse, type SettingText, setting } from './settings.ts';

function days(env: string, fallback: number, description: string) {
  const text: SettingText = { env, group: 'retention', description };
  return setting<number>(
    {
      ...text,
      trim: true,
      accepts: 'days (integer ≥ 0), or `keep`',
      defaultText: fallback === 0 ? '`keep`' : `\`${fallback}\``,
    },
    (raw) => {
      if (raw === undefined) return fallback;
      if (raw.toLowerCase() === 'keep') return 0;
      const value = Number(raw);
      if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value))
        throw refuse(text, 'a whole number of days (0 or keep: kept forever)', raw);
      return value;
    },
  );
}

export const RETENTION_SCHEMA = {
  activity: days(
    'RETENTION_ACTIVITY_DAYS',
    180,
    "A member's activity rows (each call an agent made: operation, surface, token prefix, outcome), " +
      'by the time of the call. The "My agents" page and `GET /api/activity` show what is left.',
  ),
  eventLog: days(
    'RETENTION_EVENT_LOG_DAYS',
    365,
    "Each member's event-log records, by the time they were appended. A reader whose cursor is older " +
      'than the oldest kept record is told so (`pruned_through`, [api](api.md#event-log-retention)); ' +
      'ids are never reused.',
  ),
  deviceGrants: days(
    'RETENTION_DEVICE_GRANTS_DAYS',
    30,
    'Finished device-code grants (approved, denied, delivered, cancelled or expired), counted from the ' +
      "code's expiry. A pending grant is never deleted.",
  ),
  signInLinks: days(
    'RETENTION_SIGN_IN_LINKS_DAYS',
    7,
    "Sign-in links (used or not), counted from the link's expiry (15 minutes after it was sent).",
  ),
  sessions: days(
    'RETENTION_SESSIONS_DAYS',
    30,
    "Browser sessions, counted from the session's expiry (14 days after sign-in). A live session is " +
      'never deleted.',
  ),
  idempotency: days(
    'RETENTION_IDEMPOTENCY_DAYS',
    1,
    'Idempotency records (claims and the answers kept for replay), counted from the end of their 24 h ' +
      'replay window; past that window a record is never replayed, so `1` loses nothing.',
  ),
  feedback: days(
    'RETENTION_FEEDBACK_DAYS',
    365,
    'Resolved feedback tickets, counted from when they were sent. Open tickets are never deleted.',
  ),
  highlights: days(
    'RETENTION_HIGHLIGHTS_DAYS',
    90,
    'Rejected highlight stories (from the decision) and stories whose moderation expired unanswered ' +
      '(from the expiry). Approved stories are published and kept.',
  ),
  bookings: days(
    'RETENTION_BOOKINGS_DAYS',
    365,
    'Decided bookings (confirmed, declined or cancelled), counted from the end of the booked slot. ' +
      'A queued booking is never deleted.',
  ),
  tierRequests: days(
    'RETENTION_TIER_REQUESTS_DAYS',
    365,
    'Decided or withdrawn tier requests, counted from the decision. A pending request is never deleted.',
  ),
  revokedTokens: days(
    'RETENTION_REVOKED_TOKENS_DAYS',
    90,
    'Revoked tokens (only their hash, name, scopes and last use are stored), counted from the ' +
      'revocation. A token in use is never deleted.',
  ),
  operatorAudit: days(
    'RETENTION_OPERATOR_AUDIT_DAYS',
    1095,
    'The operator audit (every operator action: who, what, on whom), by the time of the action: three ' +
      'years by default, `keep` to keep it for good.',
  ),
  sweepMinutes: integer({
    env: 'RETENTION_SWEEP_MINUTES',
    group: 'retention',
    default: 60,
    min: 0,
    unit: 'minutes, integer',
    description:
      'How often `serve` and a long-running `agent-commons worker` run the retention sweep (at start, ' +
      'then on this interval; of several ' +
      'instances on one database only one sweeps at a time). `0` turns the timer off (run ' +
      '`agent-commons retention sweep` from cron instead).',
  }),
};
