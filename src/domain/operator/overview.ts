import { MS } from '../../clock.ts';
import { activity } from '../../storage/activity.ts';
import { type QueueName, backlogs as queueBacklogs } from '../../storage/backlogs.ts';
import { members } from '../../storage/members.ts';
import { tokenTally } from '../../storage/token-counts.ts';
import type { Clocked, Store } from '../ports.ts';

/**
 * What the operator landing page shows (docs/pages.md): each queue's backlog, what agents did day by
 * day, and the tokens in use. Read straight from the tables; nothing here is kept for it.
 */

export type { QueueName };

export interface Backlog {
  queue: QueueName;
  /** How many wait, counted up to a bound (storage/backlogs.ts). */
  waiting: number;
  /** More than `waiting` wait: the count stopped at its bound. */
  more: boolean;
  /** When the oldest waiting item arrived (ms), or null when nothing waits. */
  oldestAt: number | null;
}

export const QUEUES: QueueName[] = [
  'tier_requests',
  'highlights',
  'event_requests',
  'feedback',
  'rsvps',
  'bookings',
];

/** One queue's backlog. */
export async function backlogOf(deps: Store & Clocked, queue: QueueName): Promise<Backlog> {
  const { waiting, oldest, more } = await queueBacklogs.of(deps.db, queue, deps.clock.now());
  return { queue, waiting, more, oldestAt: oldest };
}

export function backlogs(deps: Store & Clocked): Promise<Backlog[]> {
  return Promise.all(QUEUES.map((queue) => backlogOf(deps, queue)));
}

export interface DayActivity {
  /** UTC day, YYYY-MM-DD. */
  day: string;
  surface: string;
  requests: number;
  refusals: number;
}

/**
 * Calls per UTC day and surface over the last `days` days (today included), and how many of them
 * were refused (status 400 and above). The activity table holds the calls members' tokens and
 * sessions made; public reads without a credential are not in it.
 */
export async function activityByDay(deps: Store & Clocked, days: number): Promise<DayActivity[]> {
  const now = deps.clock.now();
  const since = Math.floor(now / MS.day) * MS.day - (days - 1) * MS.day;
  const rows = await activity.byDay(deps.db, since);
  return rows.map((row) => ({
    day: new Date(row.day * MS.day).toISOString().slice(0, 10),
    surface: row.surface,
    requests: row.requests,
    refusals: row.refusals,
  }));
}

export interface OperationCount {
  operation: string;
  calls: number;
  refusals: number;
}

/** The operations called most over the last `days` days, with their refusals. */
export async function busiestOperations(
  deps: Store & Clocked,
  days: number,
  limit: number,
): Promise<OperationCount[]> {
  return activity.busiest(deps.db, deps.clock.now() - days * MS.day, limit);
}

export interface TokenCounts {
  live: number;
  sandbox: number;
  revoked: number;
  /** Live tokens used in the last 7 days: the agents at work. */
  activeThisWeek: number;
  /** Members with at least one live token. */
  members: number;
}

export async function tokenCounts(deps: Store & Clocked): Promise<TokenCounts> {
  const weekAgo = deps.clock.now() - 7 * MS.day;
  const tally = await tokenTally.of(deps.db, weekAgo);
  return {
    live: tally.live,
    sandbox: tally.sandbox,
    revoked: tally.revoked,
    activeThisWeek: tally.active,
    members: tally.members,
  };
}

export interface MemberLabel {
  name: string;
  tier: string;
}

/** Names and tiers of the members a queue page mentions, so an operator reads people, not ids. */
export async function memberLabels(deps: Store, ids: readonly string[]): Promise<Map<string, MemberLabel>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const rows = await members.labels(deps.db, unique);
  return new Map(rows.map((row) => [row.id, { name: row.name, tier: row.tier }]));
}
